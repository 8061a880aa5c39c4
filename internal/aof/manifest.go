// Package aof is Abacus's append-only file in Redis 7's multi-part layout:
// a directory (appenddirname) holding a base file (an RDB preamble,
// <name>.<seq>.base.rdb, or commands, <name>.<seq>.base.aof), incremental
// files of commands (<name>.<seq>.incr.aof) and the manifest
// (<name>.manifest) that lists them, one line each:
//
//	file appendonly.aof.1.base.rdb seq 1 type b
//	file appendonly.aof.1.incr.aof seq 1 type i
//
// Commands are RESP arrays of bulk strings, as Redis writes them.
package aof

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/abacusdb/abacus/internal/atomicfile"
)

// File types in the manifest.
const (
	TypeBase    = 'b'
	TypeHistory = 'h'
	TypeIncr    = 'i'
)

// ManifestFile is one line of the manifest.
type ManifestFile struct {
	Name string
	Seq  int64
	Type byte
}

// Manifest lists the files of an AOF, base first then incrementals in
// order.
type Manifest struct {
	Base    *ManifestFile
	Incrs   []ManifestFile
	History []ManifestFile
}

// ManifestName is the manifest's file name for appendfilename name.
func ManifestName(name string) string { return name + ".manifest" }

// BaseName and IncrName are the file names Redis 7.0 gives.
func BaseName(name string, seq int64, rdb bool) string {
	if rdb {
		return fmt.Sprintf("%s.%d.base.rdb", name, seq)
	}
	return fmt.Sprintf("%s.%d.base.aof", name, seq)
}

func IncrName(name string, seq int64) string { return fmt.Sprintf("%s.%d.incr.aof", name, seq) }

// ParseManifest reads a manifest's text.
func ParseManifest(b []byte) (*Manifest, error) {
	m := &Manifest{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || t[0] == '#' {
			continue
		}
		fields, err := splitArgs(t)
		if err != nil || len(fields)%2 != 0 {
			return nil, fmt.Errorf("Invalid AOF manifest file format (line %d)", line)
		}
		f := ManifestFile{Seq: -1}
		for i := 0; i < len(fields); i += 2 {
			switch fields[i] {
			case "file":
				f.Name = fields[i+1]
			case "seq":
				n, err := strconv.ParseInt(fields[i+1], 10, 64)
				if err != nil {
					return nil, fmt.Errorf("Invalid AOF manifest file format (line %d)", line)
				}
				f.Seq = n
			case "type":
				if len(fields[i+1]) != 1 {
					return nil, fmt.Errorf("Invalid AOF manifest file format (line %d)", line)
				}
				f.Type = fields[i+1][0]
			}
		}
		if f.Name == "" || f.Seq < 0 || f.Type == 0 || strings.ContainsAny(f.Name, "/\\") {
			return nil, fmt.Errorf("Invalid AOF manifest file format (line %d)", line)
		}
		switch f.Type {
		case TypeBase:
			if m.Base != nil {
				return nil, fmt.Errorf("Found duplicate base file information (line %d)", line)
			}
			m.Base = &f
		case TypeIncr:
			m.Incrs = append(m.Incrs, f)
		case TypeHistory:
			m.History = append(m.History, f)
		default:
			return nil, fmt.Errorf("Unknown AOF file type (line %d)", line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if m.Base == nil && len(m.Incrs) == 0 {
		return nil, fmt.Errorf("Found an empty AOF manifest")
	}
	return m, nil
}

// splitArgs splits on spaces, honouring double quotes (Redis quotes a
// file name with spaces).
func splitArgs(s string) ([]string, error) {
	var out []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return out, nil
		}
		if s[0] == '"' {
			end := 1
			for end < len(s) && s[end] != '"' {
				if s[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return nil, fmt.Errorf("unbalanced quotes")
			}
			v, err := strconv.Unquote(s[:end+1])
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			s = s[end+1:]
			continue
		}
		i := strings.IndexAny(s, " \t")
		if i < 0 {
			i = len(s)
		}
		out = append(out, s[:i])
		s = s[i:]
	}
}

func fmtName(n string) string {
	if strings.ContainsAny(n, " \t\"\\") {
		return strconv.Quote(n)
	}
	return n
}

// Bytes is the manifest's text.
func (m *Manifest) Bytes() []byte {
	var b bytes.Buffer
	if m.Base != nil {
		fmt.Fprintf(&b, "file %s seq %d type %c\n", fmtName(m.Base.Name), m.Base.Seq, m.Base.Type)
	}
	for _, f := range m.History {
		fmt.Fprintf(&b, "file %s seq %d type %c\n", fmtName(f.Name), f.Seq, f.Type)
	}
	for _, f := range m.Incrs {
		fmt.Fprintf(&b, "file %s seq %d type %c\n", fmtName(f.Name), f.Seq, f.Type)
	}
	return b.Bytes()
}

// Files are the files to load, in order.
func (m *Manifest) Files() []ManifestFile {
	var fs []ManifestFile
	if m.Base != nil {
		fs = append(fs, *m.Base)
	}
	return append(fs, m.Incrs...)
}

// WriteManifest replaces dir's manifest atomically.
func WriteManifest(dir, name string, m *Manifest) error {
	return WriteFile(filepath.Join(dir, ManifestName(name)), m.Bytes())
}

// WriteFile replaces path with b atomically: a temporary file next to it,
// fsync, rename, fsync of the directory.
func WriteFile(path string, b []byte) error {
	tmp := filepath.Join(filepath.Dir(path), "temp-"+filepath.Base(path))
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err := atomicfile.Commit(f, tmp, path, err); err != nil {
		return err
	}
	return atomicfile.SyncDir(path)
}

// ReadManifest reads dir's manifest; os.ErrNotExist when there is none.
func ReadManifest(dir, name string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName(name)))
	if err != nil {
		return nil, err
	}
	return ParseManifest(b)
}
