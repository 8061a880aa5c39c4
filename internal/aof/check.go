package aof

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// CheckMain is `abacus check-aof [--fix] FILE`: FILE is a manifest (every
// file it names is checked) or one AOF file. It reports, as
// redis-check-aof does, how far each file is valid; with --fix a torn or
// corrupt tail of the last file is cut off (after asking nothing: the
// caller asked for it). It returns the exit code.
func CheckMain(args []string, out io.Writer) int {
	fix := false
	var path string
	for _, a := range args {
		switch {
		case a == "--fix":
			fix = true
		case path == "" && !strings.HasPrefix(a, "--"):
			path = a
		default:
			fmt.Fprintf(out, "Usage: abacus check-aof [--fix] <file.manifest|file.aof>\n")
			return 1
		}
	}
	if path == "" {
		fmt.Fprintf(out, "Usage: abacus check-aof [--fix] <file.manifest|file.aof>\n")
		return 1
	}
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(out, "Cannot open file %s: %v\n", path, err)
		return 1
	}
	if strings.HasSuffix(path, ".manifest") {
		m, err := ParseManifest(b)
		if err != nil {
			fmt.Fprintf(out, "Invalid manifest %s: %v\n", path, err)
			return 1
		}
		fmt.Fprintf(out, "Start checking Multi Part AOF\n")
		files := m.Files()
		for i, f := range files {
			fp := filepath.Join(filepath.Dir(path), f.Name)
			if code := checkFile(fp, fix && i == len(files)-1, out); code != 0 {
				return code
			}
		}
		fmt.Fprintf(out, "All AOF files and manifest are valid\n")
		return 0
	}
	return checkFile(path, fix, out)
}

// checkFile checks one file: an RDB preamble is reported and skipped
// (check-rdb's business), commands are parsed to the end.
func checkFile(path string, fix bool, out io.Writer) int {
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(out, "Cannot open file %s: %v\n", path, err)
		return 1
	}
	if len(b) >= 5 && string(b[:5]) == "REDIS" {
		fmt.Fprintf(out, "The AOF appears to start with an RDB preamble: %s (not checked here; use check-rdb)\n", path)
		return 0
	}
	good, err := Replay(b, nil)
	fmt.Fprintf(out, "AOF analyzed: filename=%s, size=%d, ok_up_to=%d, diff=%d\n", filepath.Base(path), len(b), good, int64(len(b))-good)
	if err == nil {
		fmt.Fprintf(out, "AOF %s is valid\n", filepath.Base(path))
		return 0
	}
	var fe *FormatError
	switch {
	case errors.Is(err, ErrTruncated):
		fmt.Fprintf(out, "AOF %s ends with an incomplete command (torn write)\n", filepath.Base(path))
	case errors.As(err, &fe):
		fmt.Fprintf(out, "%v\n", fe)
	default:
		fmt.Fprintf(out, "%v\n", err)
	}
	if !fix {
		fmt.Fprintf(out, "AOF %s is not valid. Use the --fix option to try fixing it.\n", filepath.Base(path))
		return 1
	}
	if err := os.Truncate(path, good); err != nil {
		fmt.Fprintf(out, "Failed to truncate AOF %s: %v\n", path, err)
		return 1
	}
	fmt.Fprintf(out, "Successfully truncated AOF %s\n", filepath.Base(path))
	return 0
}
