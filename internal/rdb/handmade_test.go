package rdb

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Payloads in the formats no redis-server here writes: Redis 2.x-6.2's
// ziplist, zipmap and plain types, and Redis 7.2/7.4's set listpack and
// field-TTL hashes. They are built per the format descriptions, written to
// testdata/handmade by `go test -run TestTestdata -update`, and decoded by
// TestTestdata like the captured ones.

// ziplistEntry is a string, or an integer when isInt.
type zlEntry struct {
	s     string
	v     int64
	isInt bool
}

func zs(s string) zlEntry { return zlEntry{s: s} }
func zi(v int64) zlEntry  { return zlEntry{v: v, isInt: true} }

func (e zlEntry) text() string {
	if e.isInt {
		return strconv.FormatInt(e.v, 10)
	}
	return e.s
}

// buildZiplist encodes entries as Redis 6.2's ziplist.c would.
func buildZiplist(es []zlEntry) []byte {
	b := make([]byte, 10)
	prev, tail := 0, 10
	for _, e := range es {
		start := len(b)
		tail = start
		if prev < 254 {
			b = append(b, byte(prev))
		} else {
			b = append(b, 0xfe)
			b = binary.LittleEndian.AppendUint32(b, uint32(prev))
		}
		if e.isInt {
			v := e.v
			switch {
			case v >= 0 && v <= 12:
				b = append(b, 0xf1+byte(v))
			case v >= -128 && v <= 127:
				b = append(b, 0xfe, byte(v))
			case v >= -32768 && v <= 32767:
				b = append(b, 0xc0)
				b = binary.LittleEndian.AppendUint16(b, uint16(v))
			case v >= -1<<23 && v < 1<<23:
				b = append(b, 0xf0, byte(v), byte(v>>8), byte(v>>16))
			case v >= -1<<31 && v < 1<<31:
				b = append(b, 0xd0)
				b = binary.LittleEndian.AppendUint32(b, uint32(v))
			default:
				b = append(b, 0xe0)
				b = binary.LittleEndian.AppendUint64(b, uint64(v))
			}
		} else {
			n := len(e.s)
			switch {
			case n <= 63:
				b = append(b, byte(n))
			case n <= 16383:
				b = append(b, 0x40|byte(n>>8), byte(n))
			default:
				b = append(b, 0x80)
				b = binary.BigEndian.AppendUint32(b, uint32(n))
			}
			b = append(b, e.s...)
		}
		prev = len(b) - start
	}
	b = append(b, 0xff)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	binary.LittleEndian.PutUint32(b[4:], uint32(tail))
	binary.LittleEndian.PutUint16(b[8:], uint16(len(es)))
	return b
}

// buildZipmap encodes field/value pairs as Redis 2.4's zipmap.c would,
// with free bytes after every other value.
func buildZipmap(kv ...string) []byte {
	b := []byte{byte(len(kv) / 2)}
	l := func(n int) {
		if n < 254 {
			b = append(b, byte(n))
		} else {
			b = append(b, 254)
			b = binary.LittleEndian.AppendUint32(b, uint32(n))
		}
	}
	for i := 0; i < len(kv); i += 2 {
		l(len(kv[i]))
		b = append(b, kv[i]...)
		l(len(kv[i+1]))
		free := (i / 2) % 2 * 3
		b = append(b, byte(free))
		b = append(b, kv[i+1]...)
		b = append(b, make([]byte, free)...)
	}
	return append(b, 0xff)
}

func buildListpack(es []zlEntry) []byte {
	lp := newListpack(0)
	for _, e := range es {
		if e.isInt {
			lp.addInt(e.v)
		} else {
			lp.addString([]byte(e.s))
		}
	}
	return lp.finish()
}

func payload(typ byte, ver uint16, body []byte) []byte {
	b := append([]byte{typ}, body...)
	b = binary.LittleEndian.AppendUint16(b, ver)
	return binary.LittleEndian.AppendUint64(b, checksum(b))
}

func want(typ string, sorted bool, lines ...string) string {
	if sorted {
		lines = slices.Clone(lines)
		slices.Sort(lines)
	}
	return typ + "\n" + strings.Join(lines, "\n") + "\n"
}

func quoteAll(es []zlEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, strconv.Quote(e.text()))
	}
	return out
}

func pairsWant(es []zlEntry, typ string) []string {
	var out []string
	for i := 0; i+1 < len(es); i += 2 {
		if typ == "zset" {
			f, _ := strconv.ParseFloat(es[i+1].text(), 64)
			out = append(out, strconv.Quote(es[i].text())+" "+strconv.FormatFloat(f, 'g', -1, 64))
		} else {
			out = append(out, strconv.Quote(es[i].text())+" "+strconv.Quote(es[i+1].text())+" 0")
		}
	}
	return out
}

// writeHandmade writes testdata/handmade; TestTestdata calls it with -update.
func writeHandmade(t *testing.T) {
	dir := "testdata/handmade"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	put := func(name string, p []byte, w string) {
		if err := os.WriteFile(filepath.Join(dir, name+".dump"), p, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".want"), []byte(w), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	listEs := []zlEntry{zs("a"), zi(0), zi(12), zi(13), zi(-128), zi(300), zi(-70000), zi(1 << 30), zi(-1 << 40),
		zs(""), zs(strings.Repeat("m", 100)), zs(strings.Repeat("L", 17000))}
	zl := buildZiplist(listEs)
	put("list-ziplist", payload(TypeListZiplist, 6, appendString(nil, zl, false)), want("list", false, quoteAll(listEs)...))
	ql := appendLen(nil, 2)
	ql = appendString(ql, zl, true)
	ql = appendString(ql, buildZiplist(listEs[:3]), false)
	put("list-quicklist", payload(TypeListQuicklist, 9, ql), want("list", false, append(quoteAll(listEs), quoteAll(listEs[:3])...)...))
	plain := appendLen(nil, 4)
	for _, s := range []string{"x", "12345", strings.Repeat("ab", 40), "-7"} {
		plain = appendString(plain, []byte(s), true)
	}
	put("list-plain", payload(TypeList, 1, plain), want("list", false, `"x"`, `"12345"`, strconv.Quote(strings.Repeat("ab", 40)), `"-7"`))
	q2 := appendLen(nil, 3)
	q2 = appendLen(q2, containerPacked)
	q2 = appendString(q2, buildListpack(listEs[:4]), false)
	q2 = appendLen(q2, containerPlain)
	q2 = appendString(q2, []byte(strings.Repeat("P", 300)), true)
	q2 = appendLen(q2, containerPacked)
	q2 = appendString(q2, buildListpack(listEs[4:6]), false)
	put("list-quicklist2-plain-node", payload(TypeListQuicklist2, 10, q2),
		want("list", false, append(append(quoteAll(listEs[:4]), strconv.Quote(strings.Repeat("P", 300))), quoteAll(listEs[4:6])...)...))

	setPlain := appendLen(nil, 3)
	for _, s := range []string{"one", "2", "three"} {
		setPlain = appendString(setPlain, []byte(s), false)
	}
	put("set-plain", payload(TypeSet, 1, setPlain), want("set", true, `"one"`, `"2"`, `"three"`))
	setEs := []zlEntry{zs("a"), zi(5), zs("bb"), zi(-100000)}
	put("set-listpack", payload(TypeSetListpack, 11, appendString(nil, buildListpack(setEs), false)), want("set", true, quoteAll(setEs)...))

	zsetEs := []zlEntry{zs("a"), zi(1), zs("b"), zs("2.5"), zs("c"), zs("inf"), zs("d"), zi(-9000000000)}
	put("zset-ziplist", payload(TypeZSetZiplist, 6, appendString(nil, buildZiplist(zsetEs), false)),
		want("zset", false, `"d" -9e+09`, `"a" 1`, `"b" 2.5`, `"c" +Inf`))
	old := appendLen(nil, 3)
	for _, m := range []struct {
		m string
		d []byte
	}{{"x", []byte{3, '1', '.', '5'}}, {"y", []byte{255}}, {"z", []byte{254}}} {
		old = appendString(old, []byte(m.m), false)
		old = append(old, m.d...)
	}
	put("zset-old", payload(TypeZSet, 1, old), want("zset", false, `"y" -Inf`, `"x" 1.5`, `"z" +Inf`))
	z2 := appendLen(nil, 2)
	z2 = appendString(z2, []byte("p"), false)
	z2 = appendBinaryDouble(z2, 0.1)
	z2 = appendString(z2, []byte("q"), false)
	z2 = appendBinaryDouble(z2, -3)
	put("zset-2", payload(TypeZSet2, 8, z2), want("zset", false, `"q" -3`, `"p" 0.1`))

	long := strings.Repeat("z", 300)
	put("hash-zipmap", payload(TypeHashZipmap, 2, appendString(nil, buildZipmap("f", "v", "n", "1", "long", long, "", "empty-field"), false)),
		want("hash", true, `"f" "v" 0`, `"n" "1" 0`, `"long" `+strconv.Quote(long)+` 0`, `"" "empty-field" 0`))
	hashEs := []zlEntry{zs("f"), zs("v"), zs("n"), zi(-5), zi(7), zs("seven")}
	put("hash-ziplist", payload(TypeHashZiplist, 6, appendString(nil, buildZiplist(hashEs), false)), want("hash", true, pairsWant(hashEs, "hash")...))
	hp := appendLen(nil, 2)
	for _, s := range []string{"k1", "v1", "k2", strings.Repeat("w", 100)} {
		hp = appendString(hp, []byte(s), true)
	}
	put("hash-plain", payload(TypeHash, 1, hp), want("hash", true, `"k1" "v1" 0`, `"k2" `+strconv.Quote(strings.Repeat("w", 100))+` 0`))

	// Field-TTL hashes (Redis 7.4). Times lie after testNow in the
	// external test (1.7e12), except one already due, which is dropped.
	const min = 1_800_000_000_000
	meta := appendMillis(nil, min)
	meta = appendLen(meta, 3)
	for _, f := range []struct {
		ttl  uint64
		f, v string
	}{{1, "a", "x"}, {0, "b", "y"}, {5001, "c", "z"}} {
		meta = appendLen(meta, f.ttl)
		meta = appendString(meta, []byte(f.f), false)
		meta = appendString(meta, []byte(f.v), false)
	}
	hw := want("hash", true, `"a" "x" 1800000000000`, `"b" "y" 0`, `"c" "z" 1800000005000`)
	put("hash-metadata", payload(TypeHashMetadata, 12, meta), hw)
	pre := appendLen(nil, 3)
	for _, f := range []struct {
		at   uint64
		f, v string
	}{{min, "a", "x"}, {0, "b", "y"}, {min + 5000, "c", "z"}} {
		pre = appendLen(pre, f.at)
		pre = appendString(pre, []byte(f.f), false)
		pre = appendString(pre, []byte(f.v), false)
	}
	put("hash-metadata-pre-ga", payload(TypeHashMetadataPre, 12, pre), hw)
	lpex := buildListpack([]zlEntry{zs("a"), zs("x"), zi(min), zs("c"), zs("z"), zi(min + 5000), zs("gone"), zs("old"), zi(1000), zs("b"), zs("y"), zi(0)})
	put("hash-listpackex", payload(TypeHashListpackEx, 12, appendString(appendMillis(nil, min), lpex, false)), hw)
	put("hash-listpackex-pre-ga", payload(TypeHashListpackExPre, 12, appendString(nil, lpex, false)), hw)
}
