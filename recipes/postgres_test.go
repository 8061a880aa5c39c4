package recipes

import (
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/abacusdb/abacus/internal/testenv"
)

// pgBin finds PostgreSQL's server programs: on PATH, or where Debian's
// postgresql package puts them.
func pgBin() string {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(m) == 0 {
		return ""
	}
	return filepath.Dir(m[len(m)-1])
}

var (
	pgOnce sync.Once
	pgDSN  string
	pgErr  error
	pgStop func()
)

// postgres returns a database of a PostgreSQL cluster started for this
// test process (initdb into a temporary directory, a free loopback port),
// stopped when the package's tests end. Without PostgreSQL it skips the
// test, or fails it under ABACUS_REQUIRE_REDIS=1, which CI sets after
// installing Debian's postgresql package.
func postgres(t *testing.T) *sql.DB {
	t.Helper()
	bin := pgBin()
	if bin == "" {
		if testenv.Required() {
			t.Fatalf("no PostgreSQL server programs (initdb), and %s=1 requires them: apt-get install postgresql", testenv.RequireEnv)
		}
		testenv.Skip(t, "no PostgreSQL server programs (initdb): apt-get install postgresql")
	}
	pgOnce.Do(func() { pgDSN, pgStop, pgErr = startPostgres(bin) })
	if pgErr != nil {
		t.Fatalf("starting PostgreSQL: %v", pgErr)
	}
	db, err := sql.Open("pgx", pgDSN)
	must(t, err)
	t.Cleanup(func() { db.Close() })
	for _, q := range []string{"DROP TABLE IF EXISTS counters", "DROP TABLE IF EXISTS counters_batches"} {
		_, err := db.ExecContext(ctx, q)
		must(t, err)
	}
	return db
}

func startPostgres(bin string) (dsn string, stop func(), err error) {
	dir, err := os.MkdirTemp("", "abacus-pg-")
	if err != nil {
		return "", nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		// initdb and postgres refuse to run as root: run them as the
		// postgres user that Debian's package creates.
		u, err := user.Lookup("postgres")
		if err != nil {
			return "", nil, fmt.Errorf("running as root and no postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return "", nil, err
		}
	}
	run := func(name string, args ...string) *exec.Cmd {
		c := exec.Command(filepath.Join(bin, name), args...)
		c.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
		return c
	}
	data := filepath.Join(dir, "data")
	if out, err := run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "--no-sync").CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv := run("postgres", "-D", data, "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-k", dir, "-F",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	srv.Stdout, srv.Stderr = nil, nil
	if err := srv.Start(); err != nil {
		return "", nil, err
	}
	stop = func() {
		srv.Process.Signal(syscall.SIGINT) // fast shutdown
		srv.Wait()
		os.RemoveAll(dir)
	}
	dsn = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		stop()
		return "", nil, err
	}
	defer db.Close()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err = db.PingContext(ctx); err == nil {
			return dsn, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("postgres did not answer: %v", err)
		}
	}
}

func TestBufferPostgres(t *testing.T) {
	both(t, func(t *testing.T, e *env) { bufferBody(t, e, postgres(t), Postgres) })
}
