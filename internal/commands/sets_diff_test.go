package commands_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/abacusdb/abacus/internal/servertest"
)

// Differential tests of the set commands against redis-server 7.0: fixed
// edge cases, with the dirty counter and keyspace hits and misses compared
// after every command. Abacus runs with set-max-listpack-entries 0 (see
// sxDiff) so that OBJECT ENCODING must match 7.0 byte for byte.

// sxCases counts the commands the fixed differential cases send (each is
// one case: its reply and counters compared); reported by the tests' logs.
var sxCases int

// sxLines runs commands written one per line (split on spaces; "#" starts a
// comment) and compares replies and counters. A line starting with "~ "
// compares its reply as an unordered collection: Redis's hash tables reply
// in an order set by a per-process seed.
func sxLines(t *testing.T, d *servertest.Diff, text string) {
	t.Helper()
	dc := newSkDirtyCheck(t, d)
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ordered := true
		if rest, ok := strings.CutPrefix(line, "~ "); ok {
			line, ordered = rest, false
		}
		sxDo(t, d, ordered, strings.Fields(line)...)
		dc.check(t, d, line)
		sxCases++
	}
}

func TestSetsDiffBasics(t *testing.T) {
	d, _ := sxDiff(t, true)
	sxLines(t, d, `
SADD s 3 1 2 1
SADD s 2 4
SCARD s
SCARD nosuch
SISMEMBER s 1
SISMEMBER s 9
SISMEMBER s a
SISMEMBER nosuch 1
SMISMEMBER s 1 9 2 a
SMISMEMBER nosuch 1 2
SMEMBERS s
SMEMBERS nosuch
OBJECT ENCODING s
SREM s 9
SREM s 1 1 4 a
SREM nosuch 1
SMEMBERS s
SREM s 2 3 99
EXISTS s
SADD t a
OBJECT ENCODING t
SADD t b c
~ SMEMBERS t
SREM t a b c d
EXISTS t
TYPE t
# arity
SADD s
SREM s
SISMEMBER s
SISMEMBER s a b
SMISMEMBER s
SCARD
SCARD a b
SMEMBERS
SMEMBERS a b
SRANDMEMBER
SPOP
SMOVE a b
SMOVE a b c d
SINTER
SINTERSTORE d
SUNION
SUNIONSTORE d
SDIFF
SDIFFSTORE d
SINTERCARD 1
SSCAN s
`)
}

func TestSetsDiffWrongType(t *testing.T) {
	d, _ := sxDiff(t, true)
	sxLines(t, d, `
SET str v
RPUSH list a
HSET hash f v
SADD set 1 2
SADD str a
SREM str a
SISMEMBER str a
SMISMEMBER str a
SCARD str
SMEMBERS str
SRANDMEMBER str
SRANDMEMBER str 2
SRANDMEMBER str -2
SRANDMEMBER str x
SPOP str
SPOP str 1
SPOP str x
SSCAN str 0
SSCAN str x
SSCAN list 0 COUNT 0
SMOVE str set a
SMOVE set str 1
SMOVE set str 9
SMOVE nosuch str a
SMOVE str nosuch a
SMOVE set list 1
SINTER set str
SINTER nosuch str
SINTER str nosuch
SINTER set nosuch hash
SINTERSTORE d set str
SINTERSTORE d nosuch list
SINTERSTORE str set set
TYPE str
SUNION set hash
SUNION nosuch hash
SUNIONSTORE d hash set
SDIFF str set
SDIFF nosuch list
SDIFF set nosuch list
SDIFFSTORE d set list
SINTERCARD 2 set str
SINTERCARD 2 nosuch str
SINTERCARD 1 list LIMIT 1
SMEMBERS set
`)
}

func TestSetsDiffIntegers(t *testing.T) {
	d, _ := sxDiff(t, true)
	sxLines(t, d, `
SADD i 5 -3 0 9223372036854775807 -9223372036854775808 100 -100
SMEMBERS i
OBJECT ENCODING i
SISMEMBER i -3
SISMEMBER i -0
SISMEMBER i 05
SISMEMBER i +5
SISMEMBER i 9223372036854775808
SMISMEMBER i 0 -0 00 0x0
SREM i -0 +5 05
SMEMBERS i
# each non-canonical form converts a fresh intset
SADD a 1 -0
OBJECT ENCODING a
~ SMEMBERS a
SADD b 1 01
OBJECT ENCODING b
SADD c 1 +1
OBJECT ENCODING c
SADD e 1 1.0
OBJECT ENCODING e
SADD f 1 9223372036854775808
OBJECT ENCODING f
SADD g 1 -9223372036854775809
OBJECT ENCODING g
SADD h 1 " 1"
OBJECT ENCODING h
SADD j 0
OBJECT ENCODING j
SADD k -1
OBJECT ENCODING k
SADD l x
OBJECT ENCODING l
SADD l 1
OBJECT ENCODING l
SREM l x
OBJECT ENCODING l
SMEMBERS l
SISMEMBER l 1
`)
}

func TestSetsDiffConversions(t *testing.T) {
	d, _ := sxDiff(t, true)
	sxIntsetLimit(t, d, 4)
	sxLines(t, d, `
SADD s 4 3 2 1
OBJECT ENCODING s
SMEMBERS s
SADD s 3
OBJECT ENCODING s
SADD s 5
OBJECT ENCODING s
~ SMEMBERS s
SREM s 5 4 3
OBJECT ENCODING s
~ SMEMBERS s
SADD big 1 2 3 4 5 6 7 8
OBJECT ENCODING big
SCARD big
SISMEMBER big 8
SISMEMBER big x
SADD big x
OBJECT ENCODING big
SCARD big
# one SADD of many integers converts once it passes the limit
SADD many 10 20 30 40 50
OBJECT ENCODING many
# a lower limit applies from the next write
SADD lim 1 2 3
CONFIG SET set-max-intset-entries 2
OBJECT ENCODING lim
SADD lim 3
OBJECT ENCODING lim
SADD lim 4
OBJECT ENCODING lim
CONFIG SET set-max-intset-entries 0
SADD zero 1
OBJECT ENCODING zero
CONFIG SET set-max-intset-entries 4
# SMOVE creates the destination for the member it moves
SADD src 1 x
SMOVE src dst1 1
OBJECT ENCODING dst1
SMOVE src dst2 x
OBJECT ENCODING dst2
EXISTS src
SADD src 7
SMOVE src dst1 7
SMEMBERS dst1
SMOVE dst1 dst2 1
~ SMEMBERS dst2
OBJECT ENCODING dst2
`)
}

// TestSetsDiffAlgebra: intersections, unions and differences with missing
// keys, repeated keys, every encoding, destinations of every kind.
// Intset-encoded results are ordered; the others are compared unordered.
func TestSetsDiffAlgebra(t *testing.T) {
	d, _ := sxDiff(t, true)
	sxIntsetLimit(t, d, 6)
	sxLines(t, d, `
SADD i1 1 2 3 4 5
SADD i2 4 5 6 7
SADD i3 5 7 9
SADD h1 1 2 3 a b
SADD h2 a b c 3
SADD big 1 2 3 4 5 6 7 8 9 10
SINTER i1 i2
SINTER i1 i2 i3
SINTER i1 i1
SINTER i1
SINTER i1 nosuch
SINTER nosuch i1
~ SINTER h1 h2
SINTER i1 h1
SINTER big i1
SINTER i1 big i2
SINTERSTORE d i1 i2
SMEMBERS d
OBJECT ENCODING d
SINTERSTORE d h1 h2
OBJECT ENCODING d
~ SMEMBERS d
SINTERSTORE d big big
OBJECT ENCODING d
SINTERSTORE d i1 h1
OBJECT ENCODING d
SINTERSTORE d i1 nosuch
EXISTS d
SINTERSTORE d i1 nosuch
SINTERSTORE i1 i1 i2
SMEMBERS i1
SADD i1 1 2 3
~ SUNION i1 i2
~ SUNION i1 nosuch i3
SUNION i1 nosuch
SUNION i1 i1
SUNION nosuch
~ SUNION i1 h1
~ SUNION i1 big
SUNIONSTORE d i1 i2
~ SMEMBERS d
OBJECT ENCODING d
SUNIONSTORE d i1 i1
SMEMBERS d
OBJECT ENCODING d
SUNIONSTORE d i1 i2 i3
OBJECT ENCODING d
SUNIONSTORE d nosuch
EXISTS d
SUNIONSTORE d nosuch
SUNIONSTORE d h1 h2
OBJECT ENCODING d
~ SMEMBERS d
SDIFF i1 i2
SDIFF i1 i2 i3
SDIFF i1 i1
SDIFF i1 nosuch
SDIFF nosuch i1
~ SDIFF h1 h2
SDIFF h1 h2 i1
SDIFF big i1
SDIFFSTORE d i1 i2
SMEMBERS d
OBJECT ENCODING d
SDIFFSTORE d big i1
OBJECT ENCODING d
SDIFFSTORE d i1 big
EXISTS d
SDIFFSTORE d i1 big
SDIFFSTORE i2 i2 i3
SMEMBERS i2
`)
}

// TestSetsDiffSdiffAlgorithms: Redis picks SDIFF's algorithm by the input
// sizes, and its second algorithm leaves a hash table where the first
// would make an intset.
func TestSetsDiffSdiffAlgorithms(t *testing.T) {
	d, _ := sxDiff(t, true)
	sxLines(t, d, `
SADD p 1 2 3 4 5 6 x
SADD q x
SADD r y
SADD s 6
SDIFFSTORE d p q r
OBJECT ENCODING d
~ SDIFF p q r
SDIFFSTORE d p q
OBJECT ENCODING d
SDIFF p q
SDIFFSTORE d p q s
OBJECT ENCODING d
~ SDIFF p q s
SDIFFSTORE d p q nosuch r
OBJECT ENCODING d
SDIFFSTORE d p nosuch q
OBJECT ENCODING d
SDIFFSTORE d p q r p
EXISTS d
SADD pp 1 2 3 4 5 6 7 8 x y
SADD p2 1 2 3 4 5 6 7 8
SDIFFSTORE d pp q r
OBJECT ENCODING d
~ SMEMBERS d
SDIFFSTORE d pp p2 q
EXISTS d
`)
	sxIntsetLimit(t, d, 4)
	sxLines(t, d, `
SADD big 1 2 3 4 5 6
SADD rm 5 6
SADD rm2 100
SDIFFSTORE d big rm rm2
OBJECT ENCODING d
SDIFFSTORE d big rm
OBJECT ENCODING d
SADD rm3 101
SDIFFSTORE d big rm rm2 rm3
OBJECT ENCODING d
SADD huge 1 2 3 4 5 6 7 8 9 10 11 12
SDIFFSTORE d huge rm rm2
OBJECT ENCODING d
~ SMEMBERS d
SDIFFSTORE d huge big rm2
OBJECT ENCODING d
~ SMEMBERS d
`)
}

func TestSetsDiffSintercard(t *testing.T) {
	d, _ := sxDiff(t, true)
	sxLines(t, d, `
SADD a 1 2 3 4 x
SADD b 2 3 4 x y
SADD c 3 4 x
SINTERCARD 1 a
SINTERCARD 2 a b
SINTERCARD 3 a b c
SINTERCARD 3 a b c LIMIT 0
SINTERCARD 3 a b c LIMIT 1
SINTERCARD 3 a b c LIMIT 2
SINTERCARD 3 a b c LIMIT 3
SINTERCARD 3 a b c LIMIT 100
SINTERCARD 3 a b c limit 1 LIMIT 2
SINTERCARD 2 a a
SINTERCARD 2 a nosuch
SINTERCARD 2 nosuch a
SINTERCARD 0 a
SINTERCARD -1 a
SINTERCARD x a
SINTERCARD 01 a
SINTERCARD 9223372036854775808 a
SINTERCARD 2 a
SINTERCARD 3 a b
SINTERCARD 1 a LIMIT
SINTERCARD 1 a LIMIT -1
SINTERCARD 1 a LIMIT x
SINTERCARD 1 nosuch LIMIT -1
SINTERCARD 1 a FOO 1
SINTERCARD 1 a LIMIT 1 FOO
SINTERCARD 1 a b
COMMAND GETKEYS SINTERCARD 2 a b
COMMAND GETKEYS SINTERCARD 2 a b LIMIT 1
COMMAND GETKEYS SINTERCARD 1 a
`)
}

func TestSetsDiffRandomCommands(t *testing.T) {
	d, _ := sxDiff(t, true)
	sxLines(t, d, `
SADD i 3 1 2
SRANDMEMBER i 3
SRANDMEMBER i 100
SRANDMEMBER i 0
SRANDMEMBER i -0
SRANDMEMBER nosuch
SRANDMEMBER nosuch 0
SRANDMEMBER nosuch 5
SRANDMEMBER nosuch -5
SRANDMEMBER i x
SRANDMEMBER nosuch x
SRANDMEMBER i 1.5
SRANDMEMBER i -9223372036854775808
SRANDMEMBER i 9223372036854775808
SRANDMEMBER i 1 2
SRANDMEMBER nosuch 1 2
SPOP i 0
SPOP nosuch
SPOP nosuch 0
SPOP nosuch 3
SPOP nosuch -1
SPOP i -1
SPOP i x
SPOP i 1.5
SPOP i 1 2
SPOP nosuch 1 2
SPOP i 3
EXISTS i
SADD i 1 2 3
SPOP i 100
EXISTS i
SADD j 5
SPOP j
EXISTS j
SADD j 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127 128 129 130 131 132 133 134 135 136 137 138 139 140 141 142 143 144 145 146 147 148 149 150 151 152 153 154 155 156 157 158 159 160 161 162 163 164 165 166 167 168 169 170 171 172 173 174 175 176 177 178 179 180 181 182 183 184 185 186 187 188 189 190 191 192 193 194 195 196 197 198 199 200 201 202 203 204 205 206 207 208 209 210 211 212 213 214 215 216 217 218 219 220 221 222 223 224 225 226 227 228 229 230 231 232 233 234 235 236 237 238 239 240 241 242 243 244 245 246 247 248 249 250 251 252 253 254 255 256 257 258 259 260 261 262 263 264 265 266 267 268 269 270 271 272 273 274 275 276 277 278 279 280 281 282 283 284 285 286 287 288 289 290 291 292 293 294 295 296 297 298 299 300 301 302 303 304 305 306 307 308 309 310 311 312 313 314 315 316 317 318 319 320 321 322 323 324 325 326 327 328 329 330 331 332 333 334 335 336 337 338 339 340 341 342 343 344 345 346 347 348 349 350 351 352 353 354 355 356 357 358 359 360 361 362 363 364 365 366 367 368 369 370 371 372 373 374 375 376 377 378 379 380 381 382 383 384 385 386 387 388 389 390 391 392 393 394 395 396 397 398 399 400 401 402 403 404 405 406 407 408 409 410 411 412 413 414 415 416 417 418 419 420 421 422 423 424 425 426 427 428 429 430 431 432 433 434 435 436 437 438 439 440 441 442 443 444 445 446 447 448 449 450 451 452 453 454 455 456 457 458 459 460 461 462 463 464 465 466 467 468 469 470 471 472 473 474 475 476 477 478 479 480 481 482 483 484 485 486 487 488 489 490 491 492 493 494 495 496 497 498 499 500 501 502 503 504 505 506 507 508 509 510 511 512 513 514 515 516 517 518 519 520
OBJECT ENCODING j
~ SRANDMEMBER j 1000
~ SPOP j 1000
EXISTS j
SADD h 9 3 1 2 x 5 7 11 4
SREM h x
OBJECT ENCODING h
~ SMEMBERS h
~ SRANDMEMBER h 100
SUNION h
SDIFF h
~ SINTER h
SPOP h 100
`)
}

// TestSetsDiffSscan: intsets answer in one call with cursor 0 whatever the
// cursor and COUNT; options are checked only for an existing key.
func TestSetsDiffSscan(t *testing.T) {
	d, _ := sxDiff(t, true)
	sxLines(t, d, `
SADD i 1 2 3 10 11 -1
SSCAN i 0
SSCAN i 5
SSCAN i 0 COUNT 1
SSCAN i 0 MATCH 1*
SSCAN i 0 MATCH -*
SSCAN i 0 MATCH * COUNT 2
SSCAN i 0 match 1? count 1 MATCH 2*
SSCAN i 0 COUNT 0
SSCAN i 0 COUNT -1
SSCAN i 0 COUNT x
SSCAN i 0 COUNT
SSCAN i 0 MATCH
SSCAN i 0 TYPE set
SSCAN i 0 FOO bar
SSCAN i x
SSCAN i -1
SSCAN i 18446744073709551615
SSCAN i 18446744073709551616
SSCAN i " 1"
SSCAN nosuch 0
SSCAN nosuch 0 COUNT 0
SSCAN nosuch 0 FOO
SSCAN nosuch x
`)
}

// TestSetsDiffSscanLarge: a hash table is walked in several calls; both
// servers must return every member (cursors and order differ).
func TestSetsDiffSscanLarge(t *testing.T) {
	d, _ := sxDiff(t, true)
	args := []string{"SADD", "h"}
	ints := []string{"SADD", "n"}
	for i := 0; i < 700; i++ {
		args = append(args, "member:"+strconv.Itoa(i))
		ints = append(ints, strconv.Itoa(i*5-1000))
	}
	d.Do(args...)
	d.Do(ints...)
	for _, key := range []string{"h", "n"} {
		for _, extra := range [][]string{nil, {"COUNT", "7"}, {"MATCH", "*1*", "COUNT", "50"}} {
			a, callsA := sxScanAll(t, d.A, key, extra...)
			r, _ := sxScanAll(t, d.R, key, extra...)
			if len(a) != len(r) {
				t.Errorf("SSCAN %s %q: abacus %d members, redis %d", key, extra, len(a), len(r))
			}
			for m := range r {
				if !a[m] {
					t.Errorf("SSCAN %s %q: abacus missed %q", key, extra, m)
					break
				}
			}
			if callsA < 2 {
				t.Errorf("SSCAN %s %q: abacus took %d call(s) for 700 members", key, extra, callsA)
			}
		}
	}
}

// TestSetsDiffExpiredKeys: a key whose TTL has passed is missing for every
// set command, reads and writes alike.
func TestSetsDiffExpiredKeys(t *testing.T) {
	d, _ := sxDiff(t, true)
	for _, cmd := range []string{
		"SCARD e", "SISMEMBER e a", "SMEMBERS e", "SRANDMEMBER e", "SPOP e", "SREM e a",
		"SMOVE e x a", "SMOVE x e a", "SINTER e x", "SINTERCARD 1 e", "SUNION e", "SDIFF e",
		"SDIFFSTORE e x", "SSCAN e 0", "SADD e b",
	} {
		sxLines(t, d, `
DEL e x
SADD e a
SADD x a
PEXPIREAT e 1
`+cmd+`
EXISTS e
~ SMEMBERS e
~ SMEMBERS x
`)
	}
}

// TestSetsDiffTTL: writes in place keep a set's TTL; a STORE replaces the
// destination and its TTL.
func TestSetsDiffTTL(t *testing.T) {
	d, _ := sxDiff(t, true)
	sxLines(t, d, `
SADD s 1 2 3
EXPIRE s 1000
SADD s 4
SREM s 1
SPOP s 0
SMOVE s t 2
TTL s
SADD d 1
EXPIRE d 1000
SINTERSTORE d s s
TTL d
EXPIRE d 1000
SUNIONSTORE d s
TTL d
`)
}

func TestSetsDiffRESP3(t *testing.T) {
	d, _ := sxDiff(t, true)
	// HELLO's own reply names the server: not compared.
	d.A.Do("HELLO", "3")
	d.R.Do("HELLO", "3")
	sxLines(t, d, `
SADD i 3 1 2
SADD h a b c
SMEMBERS i
SMEMBERS nosuch
~ SMEMBERS h
SINTER i nosuch
SINTER i i
SUNION i nosuch
SDIFF i nosuch
~ SUNION h
SRANDMEMBER i 10
SRANDMEMBER nosuch 10
SRANDMEMBER nosuch -10
SRANDMEMBER nosuch
SMISMEMBER i 1 9
SSCAN i 0
SSCAN nosuch 0
SPOP nosuch
SPOP nosuch 2
SPOP i 0
SPOP i 3
SINTERCARD 1 h
SINTERSTORE d h h
`)
}

// TestSetsDiffWatch: which writes touch WATCHed keys. SMOVE signals the
// source whenever it removes the member and the destination only when the
// member is new there; a STORE with an empty result touches the
// destination only if there was one to delete.
func TestSetsDiffWatch(t *testing.T) {
	d, _ := sxDiff(t, true)
	other := func(cmd ...string) {
		t.Helper()
		for _, c := range []*servertest.Conn{servertest.Dial(t, d.A.Addr), servertest.Dial(t, d.R.Addr)} {
			c.Do(cmd...)
		}
	}
	for _, tc := range []struct {
		setup string
		watch string
		cmd   []string
	}{
		{"SADD s a\nSADD t a", "t", []string{"SMOVE", "s", "t", "a"}},
		{"SADD s a\nSADD t b", "t", []string{"SMOVE", "s", "t", "a"}},
		{"SADD s a b\nSADD t a", "s", []string{"SMOVE", "s", "t", "a"}},
		{"SADD s a\nSADD t a", "s", []string{"SMOVE", "s", "t", "z"}},
		{"SADD s a", "s", []string{"SMOVE", "s", "s", "a"}},
		{"SADD s a", "s", []string{"SADD", "s", "a"}},
		{"SADD s a", "s", []string{"SREM", "s", "z"}},
		{"SADD s a", "s", []string{"SPOP", "s", "0"}},
		{"SADD s a", "d", []string{"SINTERSTORE", "d", "s", "nosuch"}},
		{"SADD s a\nSADD d x", "d", []string{"SINTERSTORE", "d", "s", "nosuch"}},
		{"SADD s a", "d", []string{"SUNIONSTORE", "d", "nosuch"}},
		{"SADD s a", "d", []string{"SDIFFSTORE", "d", "s", "s"}},
	} {
		d.Do("FLUSHALL")
		sxLines(t, d, tc.setup)
		d.Do("WATCH", tc.watch)
		other(tc.cmd...)
		d.Do("MULTI")
		d.Do("PING")
		d.Do("EXEC")
	}
}

// TestSetsDiffCommandInfo: the table entries answer COMMAND INFO as
// redis-server does where the table can express the key spec (one spec),
// and COMMAND GETKEYS for the others.
func TestSetsDiffCommandInfo(t *testing.T) {
	d, _ := sxDiff(t, true)
	for _, name := range []string{"sadd", "srem", "sismember", "smismember", "scard", "smembers",
		"srandmember", "spop", "sscan", "sinter", "sunion", "sdiff"} {
		d.Do("COMMAND", "INFO", name)
		sxCases++
	}
	sxLines(t, d, `
COMMAND GETKEYS smove a b m
COMMAND GETKEYS sinterstore d a b
COMMAND GETKEYS sunionstore d a
COMMAND GETKEYS sdiffstore d a b c
COMMAND GETKEYS sintercard 3 a b c LIMIT 2
COMMAND GETKEYSANDFLAGS sadd k a
COMMAND GETKEYSANDFLAGS spop k
`)
	t.Logf("%d fixed differential cases so far in this run", sxCases)
}
