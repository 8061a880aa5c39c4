package servertest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// listensOn reports whether process pid holds the socket listening on
// 127.0.0.1:port. A free port found by the test may be taken by another
// process (a server of a package tested in parallel) before redis-server
// binds it; redis-server then exits, and a connection to the port reaches
// the other process, which the tests would take for their redis-server.
func listensOn(pid, port int) bool {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return true // nothing to check against: trust the connection
	}
	defer f.Close()
	local := fmt.Sprintf("0100007F:%04X", port)
	inode := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		fields := strings.Fields(sc.Text())
		if len(fields) > 9 && fields[1] == local && fields[3] == "0A" {
			inode = fields[9]
			break
		}
	}
	if inode == "" {
		return false
	}
	want := "socket:[" + inode + "]"
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && l == want {
			return true
		}
	}
	return false
}
