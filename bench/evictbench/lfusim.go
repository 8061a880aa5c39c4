package main

import (
	"fmt"
	"math/rand/v2"
)

// simulateLFU runs the cache workload of cacheRun against a model of LFU
// eviction instead of a server: capacity keys, the pool of 16 refilled
// with 5 uniform samples per eviction, Redis's counter rules (LFU_INIT_VAL
// 5, lfu-log-factor 10, lfu-decay-time 1) and a clock of rate GETs per
// second. It prints the hit ratio with Redis's score and with Abacus's
// (ties of the decayed counter broken by the undecayed one), so that
// both are compared at the same rate: the decay follows wall-clock
// minutes, and a server's ratio moves with its speed.
func simulateLFU(keys, requests, batch, capacity int, rate float64) {
	z := newZipf(keys, 0.99)
	for _, name := range []string{"redis", "abacus"} {
		s := lfuSim{where: make([]int32, keys), rnd: rand.New(rand.NewPCG(1, 99)), tieBreak: name == "abacus"}
		for i := range s.pool {
			s.pool[i].id = -1
		}
		req := rand.New(rand.NewPCG(42, 7))
		var hits, counted int
		var miss []int
		for done := 0; done < requests; done += batch {
			now := uint32(float64(done) / rate)
			miss = miss[:0]
			for range batch {
				id := z.next(req)
				if s.where[id] != 0 {
					s.touch(&s.keys[s.where[id]-1], now)
					if done >= requests/3 {
						hits++
					}
				} else {
					miss = append(miss, id)
				}
				if done >= requests/3 {
					counted++
				}
			}
			for _, id := range miss {
				if s.where[id] != 0 { // missed twice in the batch: an overwrite
					s.touch(&s.keys[s.where[id]-1], now)
					continue
				}
				if len(s.keys) >= capacity {
					s.evict(now)
				}
				s.keys = append(s.keys, simKey{id: int32(id), counter: 5, minute: now / 60})
				s.where[id] = int32(len(s.keys))
			}
		}
		fmt.Printf("simulated allkeys-lfu, %s's score: %d keys held of %d, %.0f GETs/s: hit ratio %.4f\n",
			name, capacity, keys, rate, float64(hits)/float64(counted))
	}
}

type simKey struct {
	id      int32
	counter uint8
	minute  uint32 // of the last access
}

type simCand struct {
	id    int32
	score uint64
}

type lfuSim struct {
	keys     []simKey
	where    []int32 // index in keys + 1, or 0
	pool     [16]simCand
	rnd      *rand.Rand
	tieBreak bool
}

func (s *lfuSim) decayed(k *simKey, now uint32) uint8 {
	if p := now/60 - k.minute; p < uint32(k.counter) {
		return k.counter - uint8(p)
	}
	return 0
}

func (s *lfuSim) touch(k *simKey, now uint32) {
	c := s.decayed(k, now)
	if c < 255 && s.rnd.Float64() < 1/(float64(max(int(c)-5, 0))*10+1) {
		c++
	}
	k.counter, k.minute = c, now/60
}

func (s *lfuSim) score(k *simKey, now uint32) uint64 {
	sc := 255 - uint64(s.decayed(k, now))
	if s.tieBreak {
		sc = sc<<8 | (255 - uint64(k.counter))
	}
	return sc
}

// evict is evictionCandidate and evictKey on the model.
func (s *lfuSim) evict(now uint32) {
	p := &s.pool
	for {
		for range 5 {
			k := &s.keys[s.rnd.IntN(len(s.keys))]
			c := simCand{id: k.id, score: s.score(k, now)}
			i := 0
			for i < 16 && p[i].id >= 0 && p[i].score < c.score {
				i++
			}
			switch {
			case i == 0 && p[15].id >= 0:
				continue
			case i < 16 && p[i].id < 0:
			case p[15].id < 0:
				copy(p[i+1:], p[i:15])
			default:
				i--
				copy(p[:i], p[1:i+1])
			}
			p[i] = c
		}
		for i := 15; i >= 0; i-- {
			c := p[i]
			if c.id < 0 {
				continue
			}
			copy(p[i:], p[i+1:])
			p[15].id = -1
			if w := s.where[c.id]; w != 0 {
				last := len(s.keys) - 1
				s.keys[w-1] = s.keys[last]
				s.where[s.keys[w-1].id] = w
				s.keys = s.keys[:last]
				s.where[c.id] = 0
				return
			}
		}
	}
}
