package rdb

import (
	"strconv"
	"testing"

	"github.com/abacusdb/abacus/internal/ds/list"
	"github.com/abacusdb/abacus/internal/ds/zset"
	"github.com/abacusdb/abacus/internal/keyspace"
)

func benchObjects() map[string]*keyspace.Object {
	l := list.New(list.DefaultFill)
	for i := 0; i < 1000; i++ {
		l.PushBack([]byte("element:" + strconv.Itoa(i)))
	}
	o, h := keyspace.NewHash()
	for i := 0; i < 1000; i++ {
		h.Set(0, []byte("field:"+strconv.Itoa(i)), []byte("value:"+strconv.Itoa(i*7)), DefaultOptions().Hash)
	}
	z := zset.New(DefaultOptions().ZSet)
	for i := 0; i < 100; i++ {
		z.Add("m:"+strconv.Itoa(i), float64(i)*1.5)
	}
	o100, h100 := keyspace.NewHash()
	for i := 0; i < 100; i++ {
		h100.Set(0, []byte("field:"+strconv.Itoa(i)), []byte("value:"+strconv.Itoa(i*7)), DefaultOptions().Hash)
	}
	return map[string]*keyspace.Object{
		"zset100":  keyspace.NewValue(keyspace.TypeZSet, z),
		"hash100":  o100,
		"list1000": keyspace.NewValue(keyspace.TypeList, l),
		"hash1000": o,
	}
}

func BenchmarkDump(b *testing.B) {
	for name, o := range benchObjects() {
		b.Run(name, func(b *testing.B) {
			p, _ := Dump(o, EncodeOptions{Compress: true})
			b.SetBytes(int64(len(p)))
			b.ReportAllocs()
			for b.Loop() {
				Dump(o, EncodeOptions{Compress: true})
			}
		})
	}
}

func BenchmarkRestore(b *testing.B) {
	for name, o := range benchObjects() {
		b.Run(name, func(b *testing.B) {
			p, _ := Dump(o, EncodeOptions{Compress: true})
			b.SetBytes(int64(len(p)))
			b.ReportAllocs()
			opt := DefaultOptions()
			for b.Loop() {
				if _, err := Restore(p, opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
