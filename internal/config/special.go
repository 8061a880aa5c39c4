package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// Parameters whose values are not a single number, word or string: each
// validates its arguments with Redis's error text and returns the form
// CONFIG GET shows.

func single(args []string) (string, error) {
	if len(args) != 1 {
		return "", verr("wrong number of arguments")
	}
	return args[0], nil
}

func canonBind(_ string, args []string) (string, error) {
	if len(args) == 1 && args[0] == "" {
		return "", nil
	}
	return strings.Join(args, " "), nil
}

// canonDir checks that the directory exists and keeps its absolute path,
// which is what Redis shows (it chdirs there; Abacus does not change the
// working directory of the process, which in-process test servers share,
// and resolves persistence files against this path instead).
func canonDir(_ string, args []string) (string, error) {
	v, err := single(args)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(v)
	if err != nil {
		return "", &ValueError{Msg: ErrnoText(err)}
	}
	if !st.IsDir() {
		return "", &ValueError{Msg: ErrnoText(syscall.ENOTDIR)}
	}
	abs, err := filepath.Abs(v)
	if err != nil {
		return "", &ValueError{Msg: ErrnoText(err)}
	}
	return abs, nil
}

// ErrnoText is an OS error as C's strerror words it ("No such file or
// directory"), which is what Redis puts in its replies and logs.
func ErrnoText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	s := err.Error()
	if r, n := utf8.DecodeRuneInString(s); n > 0 {
		s = string(unicode.ToUpper(r)) + s[n:]
	}
	return s
}

// canonName is a file name parameter (dbfilename...): no path allowed.
func canonName(what, kind string) func(string, []string) (string, error) {
	return func(_ string, args []string) (string, error) {
		v, err := single(args)
		if err != nil {
			return "", err
		}
		if strings.ContainsRune(v, '/') {
			return "", verr("%s can't be a path, just a %s", what, kind)
		}
		return v, nil
	}
}

// canonSave validates "seconds changes" pairs (seconds >= 1, changes >= 0)
// with C's strtoll leniency, as Redis does.
func canonSave(_ string, args []string) (string, error) {
	if len(args) == 1 && args[0] == "" {
		return "", nil
	}
	if len(args)%2 != 0 {
		return "", verr("Invalid save parameters")
	}
	out := make([]string, len(args))
	for i, a := range args {
		v, ok := strtoll(a)
		if !ok || (i%2 == 0 && v < 1) || (i%2 == 1 && v < 0) {
			return "", verr("Invalid save parameters")
		}
		if i%2 == 1 && v > maxInt32 {
			v = int64(int32(v)) // Redis keeps changes in an int
		}
		out[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(out, " "), nil
}

// SaveParams returns the save points of a save value: pairs of (seconds,
// changes).
func SaveParams(v string) [][2]int64 {
	f := strings.Fields(v)
	var out [][2]int64
	for i := 0; i+1 < len(f); i += 2 {
		s, _ := strconv.ParseInt(f[i], 10, 64)
		n, _ := strconv.ParseInt(f[i+1], 10, 64)
		out = append(out, [2]int64{s, n})
	}
	return out
}

// strtoll is C's strtoll with a check that it consumed the whole string:
// leading blanks, a sign and digits; an empty string is 0; overflow
// saturates.
func strtoll(s string) (int64, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if t == "" {
		return 0, strings.TrimSpace(s) == ""
	}
	var n uint64
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n <= (1<<63)/10 {
			n = n*10 + uint64(c-'0')
		} else {
			n = 1 << 63
		}
	}
	if neg {
		if n > 1<<63 {
			n = 1 << 63
		}
		return -int64(n), true
	}
	if n > maxInt64 {
		return maxInt64, true
	}
	return int64(n), true
}

func checkReplicaOf(v string) error {
	if v == "" {
		return nil
	}
	_, port, _ := strings.Cut(v, " ")
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return verr("Invalid master port")
	}
	return nil
}

func canonReplicaOf(_ string, args []string) (string, error) {
	if len(args) == 1 && args[0] == "" {
		return "", nil
	}
	if len(args) != 2 {
		return "", verr("wrong number of arguments")
	}
	if strings.EqualFold(args[0], "no") && strings.EqualFold(args[1], "one") {
		return "", nil
	}
	return args[0] + " " + args[1], nil
}

var shutdownFlagNames = []string{"default", "save", "nosave", "now", "force"}

// canonShutdownFlags is shutdown-on-sigint/sigterm: a set of flags, shown
// in a fixed order, "default" when none.
func canonShutdownFlags(_ string, args []string) (string, error) {
	var set [5]bool
	if len(args) == 0 { // "" names no flag, which Redis refuses
		return "", verr("argument(s) must be one of the following: %s", strings.Join(shutdownFlagNames, ", "))
	}
	for _, a := range args {
		found := false
		for i, n := range shutdownFlagNames {
			if strings.EqualFold(a, n) {
				set[i], found = true, true
			}
		}
		if !found {
			return "", verr("argument(s) must be one of the following: %s", strings.Join(shutdownFlagNames, ", "))
		}
	}
	if set[1] && set[2] {
		return "", verr("shutdown can't have both 'save' and 'nosave' flags")
	}
	var out []string
	for i := 1; i < len(set); i++ {
		if set[i] {
			out = append(out, shutdownFlagNames[i])
		}
	}
	if len(out) == 0 {
		return "default", nil
	}
	return strings.Join(out, " "), nil
}

func canonOOMValues(_ string, args []string) (string, error) {
	if len(args) != 3 {
		return "", verr("wrong number of arguments")
	}
	out := make([]string, 3)
	for i, a := range args {
		v, ok := strtoll(a)
		if !ok || a == "" || v < -2000 || v > 2000 {
			return "", verr("Invalid oom-score-adj-values, elements must be between -2000 and 2000.")
		}
		out[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(out, " "), nil
}

// Keyspace notification classes in the order Redis shows them; "A" is
// every class from g to d.
const (
	eventClasses    = "g$lshzxetd"
	eventCharsValid = "Ag$lshzxeKEtmdn"
)

// canonKeyspaceEvents is notify-keyspace-events: validated and shown in
// Redis's canonical order (AKE for "KEA").
func canonKeyspaceEvents(_ string, args []string) (string, error) {
	v, err := single(args)
	if err != nil {
		return "", err
	}
	set := map[byte]bool{}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == 'A' {
			for j := 0; j < len(eventClasses); j++ {
				set[eventClasses[j]] = true
			}
			continue
		}
		if !strings.ContainsRune(eventCharsValid, rune(c)) {
			return "", verr("Invalid event class character. Use '%s'.", eventCharsValid)
		}
		set[c] = true
	}
	var b strings.Builder
	all := true
	for j := 0; j < len(eventClasses); j++ {
		all = all && set[eventClasses[j]]
	}
	if all {
		b.WriteByte('A')
	} else {
		for _, c := range []byte("g$lshzxetdn") {
			if set[c] {
				b.WriteByte(c)
			}
		}
	}
	if all && set['n'] {
		// n is not part of A. Redis keeps the flag but shows "An" as "A";
		// Abacus keeps the text as the only record, so it shows "An".
		b.WriteByte('n')
	}
	for _, c := range []byte("KEm") {
		if set[c] {
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// Output buffer limit classes in Redis's order, with their defaults.
var obufClasses = []string{"normal", "slave", "pubsub"}

const defaultOutputBufferLimits = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"

// canonOutputBufferLimit is client-output-buffer-limit: groups of
// "<class> <hard> <soft> <soft-seconds>" that replace those classes of the
// current value and keep the others.
func canonOutputBufferLimit(cur string, args []string) (string, error) {
	if len(args) == 1 && args[0] == "" {
		args = nil
	}
	if len(args)%4 != 0 {
		return "", verr("Wrong number of arguments in buffer limit configuration.")
	}
	limits := parseOutputBufferLimits(cur)
	if limits == nil {
		limits = parseOutputBufferLimits(defaultOutputBufferLimits)
	}
	for i := 0; i < len(args); i += 4 {
		class := obufClass(args[i])
		if class < 0 {
			return "", verr("Invalid client class specified in buffer limit configuration.")
		}
		hard, okh := memtoull(args[i+1])
		soft, oks := memtoull(args[i+2])
		secs, okt := strtoll(args[i+3])
		if !okh || !oks || !okt || secs < 0 {
			return "", verr("Error in hard, soft or soft_seconds setting in buffer limit configuration.")
		}
		limits[class] = [3]uint64{hard, soft, uint64(secs)}
	}
	return formatOutputBufferLimits(limits), nil
}

func obufClass(name string) int {
	switch strings.ToLower(name) {
	case "normal":
		return 0
	case "slave", "replica":
		return 1
	case "pubsub":
		return 2
	}
	return -1
}

func parseOutputBufferLimits(v string) [][3]uint64 {
	f := strings.Fields(v)
	if len(f) != 12 {
		return nil
	}
	out := make([][3]uint64, 3)
	for i := 0; i < 12; i += 4 {
		c := obufClass(f[i])
		if c < 0 {
			return nil
		}
		for j := 0; j < 3; j++ {
			out[c][j], _ = strconv.ParseUint(f[i+1+j], 10, 64)
		}
	}
	return out
}

func formatOutputBufferLimits(l [][3]uint64) string {
	parts := make([]string, 0, 3)
	for i, name := range obufClasses {
		parts = append(parts, fmt.Sprintf("%s %d %d %d", name, l[i][0], l[i][1], l[i][2]))
	}
	return strings.Join(parts, " ")
}

// OutputBufferLimit returns a class's (hard, soft, soft-seconds) limits
// from a client-output-buffer-limit value; class is normal, replica or
// pubsub.
func OutputBufferLimit(v, class string) (hard, soft uint64, seconds int64) {
	l := parseOutputBufferLimits(v)
	c := obufClass(class)
	if l == nil || c < 0 {
		return 0, 0, 0
	}
	return l[c][0], l[c][1], int64(l[c][2])
}

// canonPercentiles is latency-tracking-info-percentiles: numbers in
// [0, 100], shown without trailing zeros.
func canonPercentiles(_ string, args []string) (string, error) {
	if len(args) == 1 && args[0] == "" {
		return "", nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		f, err := strconv.ParseFloat(strings.TrimLeft(a, " \t"), 64)
		if err != nil {
			return "", verr("Invalid latency-tracking-info-percentiles parameters")
		}
		if f < 0 || f > 100 {
			return "", verr("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
		}
		s := strconv.FormatFloat(f, 'f', 6, 64)
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		out[i] = s
	}
	return strings.Join(out, " "), nil
}

// checkHostname is Redis's isValidAnnouncedHostname: under 256 bytes, of
// letters, digits, hyphens and dots.
func checkHostname(v string) error {
	if len(v) >= 256 {
		return verr("Hostnames must be less than 256 characters")
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return verr("Hostnames may only contain alphanumeric characters, hyphens or dots")
		}
	}
	return nil
}

// checkActiveDefrag refuses to turn active defragmentation on, as a
// redis-server built without Redis's own jemalloc does (Debian's): Abacus
// has no defragmenter; Go's collector compacts nothing either.
func checkActiveDefrag(v string) error {
	if v == "yes" {
		return verr("Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc like the one shipped by default with the Redis source distribution")
	}
	return nil
}
