package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/peterh/liner"
	"golang.org/x/term"

	"github.com/kubectl-informer/kubectl-informer/pkg/query/interactive"
	"github.com/kubectl-informer/kubectl-informer/pkg/query/plan"
)

// runInteractive fills the caches, then answers the lines of o.In: typed at
// a terminal with line editing, history and completion, or read as they are
// from a pipe or file. At a terminal, Ctrl-C stops the answer under way and
// the session goes on; elsewhere it ends the session as it ends a query.
func (o *QueryOptions) runInteractive(ctx context.Context, conn plan.Conn) error {
	return o.interact(ctx, func(opts interactive.Options) (*interactive.Session, error) {
		return interactive.NewSession(ctx, conn, o.plan, o.Out, o.ErrOut, opts)
	})
}

// interact runs the session that start makes, reading lines from the
// terminal (with a prompt, line editing and history) or from the input.
func (o *QueryOptions) interact(ctx context.Context, start func(interactive.Options) (*interactive.Session, error)) error {
	f, ok := o.In.(*os.File)
	tty := ok && f == os.Stdin && term.IsTerminal(int(f.Fd())) && isTerminal(o.Out)
	opts := interactive.Options{}
	if tty {
		opts.Prompt = strings.Join(o.resources, ",") + "> "
	}
	s, err := start(opts)
	if err != nil {
		return err
	}
	if !tty {
		return s.Run(ctx, interactive.NewLineReader(o.In))
	}
	// Ctrl-C at the prompt is a key that liner reads (it clears the line);
	// once a line is entered it is a signal, which stops the work on that
	// line only. A session at a terminal ends with :quit, Ctrl-D or SIGTERM.
	defer divertInterrupts(ctx, func() bool {
		s.Interrupt()
		return true
	})()
	line := liner.NewLiner()
	defer func() { _ = line.Close() }()
	line.SetCtrlCAborts(true)
	line.SetTabCompletionStyle(liner.TabPrints)
	// A line longer than the terminal wraps, and stays whole in the scrollback.
	line.SetMultiLineMode(true)
	line.SetWordCompleter(s.Complete)
	path := historyPath()
	if h, err := os.Open(path); err == nil { //nolint:gosec // G304: the history file under the user's own XDG_STATE_HOME
		_, _ = line.ReadHistory(h)
		_ = h.Close()
	}
	err = s.Run(ctx, linerLines{line})
	if werr := writeHistory(line, path); werr != nil {
		_, _ = fmt.Fprintf(o.ErrOut, "warning: history not saved: %v\n", werr)
	}
	return err
}

// linerLines reads lines with liner: Ctrl-C clears the line being typed,
// and every line typed is kept in the history.
type linerLines struct{ *liner.State }

func (l linerLines) Prompt(prompt string) (string, error) {
	s, err := l.State.Prompt(prompt)
	switch {
	case errors.Is(err, liner.ErrPromptAborted):
		return "", nil
	case errors.Is(err, io.EOF):
		fmt.Println()
	case err == nil && strings.TrimSpace(s) != "":
		l.AppendHistory(s)
	}
	return s, err
}

// historyPath returns $XDG_STATE_HOME/kubectl-informer/history, or
// ~/.local/state/kubectl-informer/history when XDG_STATE_HOME is unset; ""
// when there is no home directory.
func historyPath() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "kubectl-informer", "history")
}

func writeHistory(line *liner.State, path string) error {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600) //nolint:gosec // G304: the history file under the user's own XDG_STATE_HOME
	if err != nil {
		return err
	}
	if _, err := line.WriteHistory(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
