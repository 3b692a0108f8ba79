// Package serving runs an HTTP server for as long as a context lasts.
package serving

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Grace is how long requests under way may go on once the server is
// shutting down.
const Grace = 5 * time.Second

// Until runs serve, which serves srv (srv.Serve, srv.ServeTLS or the like),
// until it fails, returning its error, or until ctx is done. Then it shuts
// srv down, giving requests under way Grace to finish, waits for serve to
// return, and returns nil: an end asked for is a clean one.
func Until(ctx context.Context, srv *http.Server, serve func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- serve() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), Grace)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
