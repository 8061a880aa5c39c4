// Command abacus is the Abacus server: a Redis-compatible in-memory
// data-structure server for real-time metrics.
//
//	abacus [/path/to/abacus.conf] [--name value ...]
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/server"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	cfg, err := config.FromArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "\n*** FATAL CONFIG FILE ERROR ***\n%v\n", err)
		return 1
	}
	srv := server.New(cfg, server.Options{})
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	select {
	case err := <-errc:
		if err != nil {
			srv.Log.Warn(err.Error())
			return 1
		}
	case sig := <-sigs:
		if sig == syscall.SIGINT {
			srv.Log.Warn("Received SIGINT scheduling shutdown...")
		} else {
			srv.Log.Warn("Received SIGTERM scheduling shutdown...")
		}
	case <-srv.ShutdownRequested:
	}
	srv.Close()
	srv.Log.Warn("Abacus is now ready to exit, bye bye...")
	return 0
}
