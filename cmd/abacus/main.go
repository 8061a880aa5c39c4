// Command abacus is the Abacus server: a Redis-compatible in-memory
// data-structure server for real-time metrics.
//
//	abacus [/path/to/abacus.conf] [--name value ...] [-]
//
// The command line is read as redis-server reads its own: a config file,
// then "--name value" options that override it, "-" to read configuration
// from standard input; -v/--version and -h/--help. SIGTERM and SIGINT stop
// accepting connections, let the replies in flight be written, and exit 0.
package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/abacusdb/abacus/internal/aof"
	"github.com/abacusdb/abacus/internal/cluster"
	_ "github.com/abacusdb/abacus/internal/commands"
	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/conn"
	"github.com/abacusdb/abacus/internal/durability"
	"github.com/abacusdb/abacus/internal/gcgoal"
	"github.com/abacusdb/abacus/internal/httpapi"
	_ "github.com/abacusdb/abacus/internal/metrics"
	"github.com/abacusdb/abacus/internal/rdb"
	"github.com/abacusdb/abacus/internal/replication"
)

// version is Abacus's own version (INFO abacus_version, --version).
const version = "0.1.0"

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, sigs))
}

// logo is shown at start in place of the "Running mode" line when
// always-show-logo is yes, or the log goes to a terminal, as Redis shows
// its own; tools that start servers (Redis's test suite) look for its
// "PID:" line.
const logo = `
     .-----------------.
     | o o o    o o o  |     Abacus %s (redis_version %s) %d bit
     | o o    o o o o  |
     | o o o o    o o  |     Running in %s mode
     | o    o o o o o  |     Port: %d
     '-----------------'     PID: %d

`

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

const usage = `Usage: abacus [/path/to/abacus.conf] [options] [-]
       abacus - (read config from stdin)
       abacus -v or --version
       abacus -h or --help

Options are configuration directives with two dashes, and override the file:
       abacus --port 7777
       abacus /etc/abacus/abacus.conf --loglevel verbose
       echo 'maxmemory 128mb' | abacus -
       abacus /etc/abacus/abacus.conf --loglevel verbose -

The directives are Redis's (see docs/configuration.md).
`

// run is the whole program, with its inputs and outputs passed in so that
// tests can drive it; it returns the exit code. The log goes to stdout
// unless logfile names a file, as Redis's does; what goes wrong before
// the configuration is read goes to stderr.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, sigs <-chan os.Signal) int {
	if len(args) > 0 {
		switch args[0] {
		case "-v", "--version":
			fmt.Fprintf(stderr, "Abacus server v=%s redis_version=%s bits=%d\n", version, config.RedisVersion, strconv.IntSize)
			return 0
		case "-h", "--help":
			fmt.Fprint(stderr, usage)
			return 0
		case "check-aof": // abacus check-aof [--fix] FILE (internal/aof/check.go)
			return aof.CheckMain(args[1:], os.Stdout)
		case "check-rdb": // abacus check-rdb FILE (internal/rdb/check.go)
			return rdb.CheckMain(args[1:], os.Stdout)
		}
	}
	early := func(msg string) {
		fmt.Fprintf(stderr, "%d:C %s # %s\n", os.Getpid(), time.Now().Format("02 Jan 2006 15:04:05.000"), msg)
	}
	a, err := config.ParseArgs(args)
	if err != nil {
		early(err.Error())
		return 1
	}
	if a.Stdin {
		early("Reading config from stdin")
	}
	cfg := config.New()
	if err := cfg.Load(a, stdin); err != nil {
		var fe *config.FileError
		if errors.As(err, &fe) {
			fmt.Fprintf(stderr, "\n%s\n%s\n", config.FatalBanner, fe)
		} else {
			early(err.Error())
		}
		return 1
	}
	if cfg.Bool(config.Daemonize) {
		early("Abacus does not fork into the background: set 'daemonize no' (or pass --daemonize no) and run it under a service manager such as systemd")
		return 1
	}

	logOut := stdout
	if path := cfg.Str(config.LogFile); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			early(fmt.Sprintf("Can't open the log file: %s", config.ErrnoText(err)))
			return 1
		}
		defer f.Close()
		logOut = f
	}
	log := conn.NewLogger(logOut, cfg)
	log.Info("oO0OoO0OoO0Oo Abacus is starting oO0OoO0OoO0Oo")
	log.Info(fmt.Sprintf("Abacus version=%s, redis_version=%s, bits=%d, pid=%d, just started",
		version, config.RedisVersion, strconv.IntSize, os.Getpid()))
	if a.File == "" && !a.Stdin {
		log.Warn("Warning: no config file specified, using the default config. In order to specify a config file use abacus /path/to/abacus.conf")
	} else {
		log.Info("Configuration loaded")
	}

	srv := conn.New(cfg, conn.Options{Logger: log})
	srv.Env.Version = version
	if err := srv.Env.LoadUsers(); err != nil { // user lines or aclfile (internal/acl)
		var fe *config.FileError
		if errors.As(err, &fe) {
			fmt.Fprintf(stderr, "\n%s\n%s\n", config.FatalBanner, fe)
		} else {
			log.Warn(err.Error())
		}
		srv.Close()
		return 1
	}
	if pidfile := cfg.Str(config.PidFile); pidfile != "" {
		if err := os.WriteFile(pidfile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
			log.Warn("Failed to write PID file: " + config.ErrnoText(err))
		} else {
			defer os.Remove(pidfile)
		}
	}
	mode := "standalone"
	if cfg.Bool(config.ClusterEnabled) {
		mode = "cluster"
	}
	if cfg.Bool(config.AlwaysShowLogo) || cfg.Str(config.LogFile) == "" && isTerminal(stdout) {
		fmt.Fprintf(logOut, logo, version, config.RedisVersion, strconv.IntSize, mode, cfg.Int(config.Port), os.Getpid())
	} else {
		log.Info(fmt.Sprintf("Running mode=%s, port=%d.", mode, cfg.Int(config.Port)))
	}
	// The sockets are bound before the data loads, as Redis's initServer
	// does: a port in use fails the start at once, not after the load.
	lns, err := srv.Listen()
	if err != nil {
		log.Warn(err.Error())
		log.Warn(fmt.Sprintf("Failed listening on port %d (tcp), aborting.", cfg.Int(config.Port)))
		srv.Close()
		return 1
	}
	var unixLn net.Listener
	if path := cfg.Str(config.UnixSocket); path != "" {
		unixLn, err = listenUnix(path, cfg.Int(config.UnixSocketPerm))
		if err != nil {
			log.Warn(fmt.Sprintf("Failed opening Unix socket: %s", err))
			closeAll(lns)
			srv.Close()
			return 1
		}
		defer os.Remove(path)
	}
	log.Info("Server initialized")
	gcgoal.Start() // the collector's headroom follows the data's size
	// The RDB file loads whole into a fresh keyspace or not at all: a bad
	// file stops the start.
	dur := durability.New(srv.Env, srv)
	dur.EnableAutoSave()
	repl := replication.New(srv.Env, srv)
	defer repl.Close()
	// The HTTP endpoint starts before the data loads, so that /readyz can
	// say it is loading.
	web, err := startHTTP(srv, cfg)
	if err != nil {
		log.Warn(err.Error())
		srv.Close()
		return 1
	}
	if web != nil {
		defer web.Close()
	}
	srv.Lock()
	err = dur.LoadAtStartup() // the AOF when appendonly yes, else the RDB
	if err == nil {
		err = dur.StartAOF()
	}
	srv.Unlock()
	if err != nil {
		log.Warn(err.Error())
		closeAll(lns)
		if unixLn != nil {
			unixLn.Close()
		}
		srv.Close()
		return 1
	}
	if web != nil {
		web.SetReady(true)
	}
	// replicaof: follow the primary once the local data is loaded (its
	// snapshot then replaces it).
	if v := cfg.Str(config.ReplicaOf); v != "" {
		if host, port, ok := strings.Cut(v, " "); ok {
			if n, err := strconv.Atoi(port); err == nil {
				srv.Lock()
				repl.Follow(host, n)
				srv.Unlock()
			}
		}
	}
	// cluster-enabled: the node table, nodes.conf and the bus
	// (internal/cluster); a replica's primary comes from nodes.conf.
	if cfg.Bool(config.ClusterEnabled) {
		cl, err := cluster.New(srv.Env, srv, repl)
		if err != nil {
			log.Warn(err.Error())
			closeAll(lns)
			srv.Close()
			return 1
		}
		defer cl.Close()
	}

	errc := make(chan error, 2)
	if unixLn != nil {
		go func() { errc <- srv.Serve(unixLn) }()
	}
	go func() { errc <- srv.Serve(lns...) }()

	for {
		select {
		case err := <-errc:
			if err != nil {
				log.Warn(err.Error())
				srv.Close()
				return 1
			}
		case sig := <-sigs:
			name := "SIGTERM"
			if sig == syscall.SIGINT {
				name = "SIGINT"
			}
			log.Warn("Received " + name + " scheduling shutdown...")
			log.Warn("User requested shutdown...")
			// As Redis: save when save points are configured, unless
			// shutdown-on-sigterm / shutdown-on-sigint say save or
			// nosave; a failed save keeps the server up unless force.
			flags := " " + cfg.Str(config.ShutdownOnSigterm) + " "
			if sig == syscall.SIGINT {
				flags = " " + cfg.Str(config.ShutdownOnSigint) + " "
			}
			srv.Lock()
			err := dur.ShutdownSave(strings.Contains(flags, " save "), strings.Contains(flags, " nosave "), strings.Contains(flags, " force "))
			srv.Unlock()
			if err != nil {
				continue // logged by ShutdownSave; the data stays served
			}
		case <-srv.ShutdownRequested:
		}
		return shutdown(srv, dur, log, sigs)
	}
}

func closeAll(lns []net.Listener) {
	for _, ln := range lns {
		ln.Close()
	}
}

// shutdown stops the server gracefully: no new connections, the batches
// in flight finish and their replies are written. A second signal while it
// waits exits at once, as Redis does.
func shutdown(srv *conn.Server, dur *durability.Durability, log *slog.Logger, sigs <-chan os.Signal) int {
	done := make(chan struct{})
	go func() {
		srv.Close()
		srv.Lock()
		dur.CloseAOF()
		srv.Unlock()
		close(done)
	}()
	select {
	case <-done:
	case <-sigs:
		log.Warn("You insist... exiting now.")
		return 1
	}
	log.Warn("Abacus is now ready to exit, bye bye...")
	return 0
}

// startHTTP starts the HTTP endpoint when http-port is set (nil when not).
func startHTTP(srv *conn.Server, cfg *config.Config) (*httpapi.Server, error) {
	port := cfg.Int(config.HTTPPort)
	if port == 0 {
		return nil, nil
	}
	addr := net.JoinHostPort(cfg.Str(config.HTTPBind), strconv.FormatInt(port, 10))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("could not listen on %s for HTTP: %w", addr, err)
	}
	web := httpapi.New(srv.Env, srv, httpapi.Limits{})
	go web.Serve(ln)
	srv.Log.Info("HTTP endpoint (metrics, health, dashboard) on http://" + ln.Addr().String() + "/")
	return web, nil
}

// listenUnix listens on a unix socket, replacing a stale socket file, with
// the given permissions (unixsocketperm; 0 keeps the default).
func listenUnix(path string, perm int64) (net.Listener, error) {
	if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeSocket != 0 {
		os.Remove(path)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "listen unix "+path+": "))
	}
	if perm != 0 {
		if err := os.Chmod(path, os.FileMode(perm)); err != nil {
			ln.Close()
			return nil, err
		}
	}
	return ln, nil
}
