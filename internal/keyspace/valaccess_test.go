package keyspace

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Object.Val is a method since the value moved into the cell. A leftover
// `o.Val` without the call still compiles where an interface is accepted
// (`cp(o.Val)`, `fmt.Sprintf("%T", o.Val)`) and silently passes the method
// value instead of the value; go vet catches only the comparisons. This
// test finds such uses in the module's Go files.
func TestNoValMethodValue(t *testing.T) {
	root := filepath.Join("..", "..")
	bad := regexp.MustCompile(`\.Val([^(\w]|$)`)
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name != ".." && strings.HasPrefix(name, ".") || name == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if i := strings.Index(line, "//"); i >= 0 {
				line = line[:i]
			}
			if bad.MatchString(line) {
				t.Errorf("%s:%d: Val used without a call: %s", path, n, strings.TrimSpace(sc.Text()))
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}
