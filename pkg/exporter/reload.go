package exporter

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WatchReloads reloads the config on SIGHUP and when its file changes,
// until ctx ends. Changes are noticed through the file's directory, so that
// a ConfigMap update (a symlink swap) counts too; a burst of changes
// reloads once.
func (x *Exporter) WatchReloads(ctx context.Context) error {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	// Without a config file (a profile alone), only SIGHUP reloads; a nil
	// watcher's channels never deliver.
	var events <-chan fsnotify.Event
	var errs <-chan error
	closeWatcher := func() {}
	if x.opts.ConfigPath != "" {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			signal.Stop(hup)
			return err
		}
		if err := w.Add(filepath.Dir(x.opts.ConfigPath)); err != nil {
			signal.Stop(hup)
			_ = w.Close()
			return err
		}
		events, errs = w.Events, w.Errors
		closeWatcher = func() { _ = w.Close() } // nothing is written through the watcher
	}
	go func() {
		defer signal.Stop(hup)
		defer closeWatcher()
		var debounce <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				x.log.Info("SIGHUP: reloading the config")
				_ = x.Reload(ctx)
			case ev, ok := <-events:
				if !ok {
					return
				}
				if relevant(ev, x.opts.ConfigPath) {
					debounce = time.After(300 * time.Millisecond)
				}
			case err, ok := <-errs:
				if !ok {
					return
				}
				x.log.Warn("watching the config file", "err", err)
			case <-debounce:
				debounce = nil
				x.log.Info("the config file changed: reloading")
				_ = x.Reload(ctx)
			}
		}
	}()
	return nil
}

// relevant reports whether a change in the config's directory may have
// changed the config: the file itself, or the ..data link of a mounted
// ConfigMap.
func relevant(ev fsnotify.Event, path string) bool {
	if ev.Op == fsnotify.Chmod {
		return false
	}
	name := filepath.Base(ev.Name)
	return filepath.Clean(ev.Name) == filepath.Clean(path) || name == "..data"
}
