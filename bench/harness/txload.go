package harness

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// TxLoad is a load generator for what redis-benchmark cannot send: MULTI,
// incrs × INCR on random keys of a keyspace of the given size, EXEC. Each of
// clients connections writes pipe such transactions at once and reads
// their replies, until n transactions are done in all. It returns
// transactions per second (each is incrs + 2 commands).
func (s *Server) TxLoad(n, clients, pipe, incrs, keyspace int) float64 {
	addr := fmt.Sprintf("127.0.0.1:%d", s.Port)
	conns := make([]net.Conn, clients)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			Fatal("%v", err)
		}
		conns[i] = c
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	start := time.Now()
	for i, c := range conns {
		wg.Add(1)
		go func(seed uint64, c net.Conn) {
			defer wg.Done()
			if err := txClient(c, seed, &left, pipe, incrs, keyspace); err != nil {
				errs <- err
			}
		}(uint64(i), c)
	}
	wg.Wait()
	el := time.Since(start)
	close(errs)
	for err := range errs {
		Fatal("%s: %v", s.Name, err)
	}
	return float64(n) / el.Seconds()
}

// txClient runs transactions on one connection while the shared budget
// lasts, checking that every EXEC answers an array of incrs integers.
func txClient(c net.Conn, seed uint64, left *atomic.Int64, pipe, incrs, keyspace int) error {
	rnd := rand.New(rand.NewPCG(seed, 0x7478))
	r := bufio.NewReaderSize(c, 1<<16)
	var buf []byte
	multi := Encode(nil, "MULTI")
	exec := Encode(nil, "EXEC")
	want := "*" + strconv.Itoa(incrs) + "\r\n"
	for {
		batch := int64(pipe)
		if rest := left.Add(-batch); rest < 0 {
			batch += rest
			if batch <= 0 {
				return nil
			}
		}
		buf = buf[:0]
		for t := int64(0); t < batch; t++ {
			buf = append(buf, multi...)
			for i := 0; i < incrs; i++ {
				buf = append(buf, "*2\r\n$4\r\nINCR\r\n"...)
				key := "tx:" + strconv.Itoa(rnd.IntN(keyspace))
				buf = append(buf, '$')
				buf = strconv.AppendInt(buf, int64(len(key)), 10)
				buf = append(buf, '\r', '\n')
				buf = append(buf, key...)
				buf = append(buf, '\r', '\n')
			}
			buf = append(buf, exec...)
		}
		if _, err := c.Write(buf); err != nil {
			return err
		}
		for t := int64(0); t < batch; t++ {
			for i := 0; i < incrs+1; i++ { // +OK, then QUEUED each
				if err := skipReply(r); err != nil {
					return err
				}
			}
			line, err := r.ReadString('\n')
			if err != nil {
				return err
			}
			if line != want {
				return fmt.Errorf("EXEC answered %q", line)
			}
			for i := 0; i < incrs; i++ {
				if err := skipReply(r); err != nil {
					return err
				}
			}
		}
	}
}
