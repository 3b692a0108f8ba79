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
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	dir := filepath.Dir(x.opts.ConfigPath)
	if err := w.Add(dir); err != nil {
		_ = w.Close()
		return err
	}
	go func() {
		defer signal.Stop(hup)
		defer func() { _ = w.Close() }() // nothing is written through the watcher
		var debounce <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				x.log.Info("SIGHUP: reloading the config")
				_ = x.Reload()
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if relevant(ev, x.opts.ConfigPath) {
					debounce = time.After(300 * time.Millisecond)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				x.log.Warn("watching the config file", "err", err)
			case <-debounce:
				debounce = nil
				x.log.Info("the config file changed: reloading")
				_ = x.Reload()
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
