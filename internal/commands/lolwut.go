package commands

import (
	"math"
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"github.com/abacusdb/abacus/internal/config"
	"github.com/abacusdb/abacus/internal/engine"
	"github.com/abacusdb/abacus/internal/num"
)

// LOLWUT [VERSION v] [args]: Redis's computer art. VERSION 5 draws Georg
// Nees's "Schotter" in Braille characters, VERSION 6 a city skyline in
// terminal colours; anything else (the default) answers the version. The
// drawings compute as Redis's do, in single-precision floats where Redis
// uses them, so a drawing with no random part (Schotter with at most two
// rows of squares) is byte for byte redis-server's; the random parts draw
// from Go's generator.

func init() {
	engine.Register(&engine.Command{Name: "lolwut", Arity: -1, Flags: engine.FlagReadonly | engine.FlagFast, Group: "server",
		Summary: "Displays computer art and the Redis version", Since: "5.0.0", Handler: cmdLolwut})
}

func cmdLolwut(c *engine.Ctx) {
	args := c.Args[1:]
	version := uint32(0) // the server's own: neither 5 nor 6
	if len(args) >= 2 && strings.EqualFold(string(args[0]), "version") {
		v, ok := num.ParseInt(args[1])
		if !ok {
			c.Error(engine.ErrNotInt)
			return
		}
		// Redis prints the version with %u of an unsigned int.
		version = uint32(v)
		args = args[2:]
	}
	var longs [3]int64
	parse := func(defaults ...int64) bool {
		for i, d := range defaults {
			longs[i] = d
			if i < len(args) {
				v, ok := num.ParseInt(args[i])
				if !ok {
					c.Error(engine.ErrNotInt)
					return false
				}
				longs[i] = v
			}
		}
		return true
	}
	var b strings.Builder
	switch version {
	case 5:
		if !parse(66, 8, 12) {
			return
		}
		cols, perRow, perCol := clampLong(longs[0], 1000), clampLong(longs[1], 200), clampLong(longs[2], 200)
		lwRenderBraille(&b, lwDrawSchotter(cols, perRow, perCol))
		b.WriteString("\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. ")
	case 6:
		if !parse(80, 20) {
			return
		}
		cv := lwNewCanvas(clampLong(longs[0], 1000), clampLong(longs[1], 1000), 3)
		lwSkyline(cv)
		lwRenderColours(&b, cv)
		b.WriteString("\nDedicated to the 8 bit game developers of past and present.\n" +
			"Original 8 bit image from Plaguemon by hikikomori. Redis ver. ")
	default:
		b.WriteString("Redis ver. ")
	}
	b.WriteString(config.RedisVersion)
	b.WriteByte('\n')
	c.W.Verbatim("txt", b.String())
}

func clampLong(v, hi int64) int { return int(min(max(v, 1), hi)) }

// crand is C's rand(): a non-negative int up to RAND_MAX.
func crand() int { return int(rand.Int32()) }

const randMax = math.MaxInt32

type lwCanvas struct {
	w, h   int
	pixels []byte
}

func lwNewCanvas(w, h int, bg byte) *lwCanvas {
	cv := &lwCanvas{w: w, h: h, pixels: make([]byte, w*h)}
	for i := range cv.pixels {
		cv.pixels[i] = bg
	}
	return cv
}

// set and get ignore coordinates outside the canvas.
func (cv *lwCanvas) set(x, y int, color byte) {
	if x >= 0 && x < cv.w && y >= 0 && y < cv.h {
		cv.pixels[x+y*cv.w] = color
	}
}

func (cv *lwCanvas) get(x, y int) byte {
	if x >= 0 && x < cv.w && y >= 0 && y < cv.h {
		return cv.pixels[x+y*cv.w]
	}
	return 0
}

// line is Bresenham's, from (x1,y1) to (x2,y2) inclusive.
func (cv *lwCanvas) line(x1, y1, x2, y2 int, color byte) {
	dx, dy := abs(x2-x1), abs(y2-y1)
	sx, sy := 1, 1
	if x1 >= x2 {
		sx = -1
	}
	if y1 >= y2 {
		sy = -1
	}
	err := dx - dy
	for {
		cv.set(x1, y1, color)
		if x1 == x2 && y1 == y2 {
			return
		}
		e2 := err * 2
		if e2 > -dy {
			err -= dy
			x1 += sx
		}
		if e2 < dx {
			err += dx
			y1 += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// square draws a square centred at (x,y), of side size, rotated by angle:
// its corners are on the circle through them, from 45 degrees plus the
// angle in steps of 90, as Redis's lwDrawSquare (in floats).
func (cv *lwCanvas) square(x, y int, size, angle float32, color byte) {
	size = float32(float64(size) / 1.4142135623)
	size = float32(math.Round(float64(size)))
	k := float32(math.Pi/4 + float64(angle))
	var px, py [4]int
	for j := range 4 {
		px[j] = int(math.Round(math.Sin(float64(k))*float64(size) + float64(x)))
		py[j] = int(math.Round(math.Cos(float64(k))*float64(size) + float64(y)))
		k = float32(float64(k) + math.Pi/2)
	}
	for j := range 4 {
		cv.line(px[j], py[j], px[(j+1)%4], py[(j+1)%4], color)
	}
}

// lwDrawSchotter draws perRow x perCol squares, displaced and rotated more
// and more at random from the third row down.
func lwDrawSchotter(cols, perRow, perCol int) *lwCanvas {
	w := cols * 2
	padding := 0
	if w > 4 {
		padding = 2
	}
	side := float32(w-padding*2) / float32(perRow)
	cv := lwNewCanvas(w, int(float32(side*float32(perCol))+float32(padding*2)), 0)
	for y := range perCol {
		for x := range perRow {
			sx := int(float32(float32(x)*side) + side/2 + float32(padding))
			sy := int(float32(float32(y)*side) + side/2 + float32(padding))
			var angle float32
			if y > 1 {
				r := func() float32 { return float32(crand()) / float32(randMax) / float32(perCol) * float32(y) }
				r1, r2, r3 := r(), r(), r()
				if crand()%2 != 0 {
					r1 = -r1
				}
				if crand()%2 != 0 {
					r2 = -r2
				}
				if crand()%2 != 0 {
					r3 = -r3
				}
				angle = r1
				sx = int(float32(sx) + float32(r2*side)/3)
				sy = int(float32(sy) + float32(r3*side)/3)
			}
			cv.square(sx, sy, side, angle, 1)
		}
	}
	return cv
}

// lwRenderBraille writes the canvas as Braille characters, each a 2x4
// block of pixels (Unicode's dot numbering: the left column is dots 1-3
// and 7, the right 4-6 and 8).
func lwRenderBraille(b *strings.Builder, cv *lwCanvas) {
	for y := 0; y < cv.h; y += 4 {
		for x := 0; x < cv.w; x += 2 {
			var bits rune
			for i, p := range [8][2]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {0, 3}, {1, 3}} {
				if cv.get(x+p[0], y+p[1]) != 0 {
					bits |= 1 << i
				}
			}
			b.WriteString(string(utf8.AppendRune(nil, 0x2800+bits)))
		}
		if y != cv.h-1 {
			b.WriteByte('\n')
		}
	}
}

// lwSkyline is Redis's generateSkyline: two passes of windowless
// skyscrapers in the two greys (the lighter behind), then black ones with
// windows in front.
func lwSkyline(cv *lwCanvas) {
	for color := byte(2); color >= 1; color-- {
		for off := -10; off < cv.w; {
			off += crand() % 8
			width := 10 + crand()%9
			var height int
			if color == 2 {
				height = cv.h/2 + crand()%cv.h/2
			} else {
				height = cv.h/2 + crand()%cv.h/3
			}
			lwSkyscraper(cv, off, width, height, false, color)
			if color == 2 {
				off += width / 2
			} else {
				off += width + 1
			}
		}
	}
	for off := -10; off < cv.w; {
		off += crand() % 8
		width := 5 + crand()%14
		if width%4 != 0 {
			width += width % 3
		}
		height := cv.h/3 + crand()%cv.h/2
		lwSkyscraper(cv, off, width, height, true, 0)
		off += width + 5
	}
}

// lwSkyscraper draws one building from the bottom of the canvas: a roof
// four pixels narrower, and windows two pixels wide and one tall in other
// colours, away from the walls.
func lwSkyscraper(cv *lwCanvas, xoff, width, height int, windows bool, color byte) {
	starty := cv.h - 1
	endy := starty - height + 1
	for y := starty; y >= endy; y-- {
		for x := xoff; x < xoff+width; x++ {
			if y == endy && (x <= xoff+1 || x >= xoff+width-2) {
				continue
			}
			c := color
			if windows && x > xoff+1 && x < xoff+width-2 && y > endy+1 && y < starty-1 {
				relx, rely := x-(xoff+1), y-(endy+1)
				if relx/2%2 != 0 && rely%2 != 0 {
					for c == color {
						c = byte(1 + crand()%2)
					}
					if relx%2 != 0 {
						c = cv.get(x-1, y)
					}
				}
			}
			cv.set(x, y, c)
		}
	}
}

// lwRenderColours writes each pixel as a space in its colour (foreground
// and background both set): black, two greys, white.
func lwRenderColours(b *strings.Builder, cv *lwCanvas) {
	for y := range cv.h {
		for x := range cv.w {
			ce := "0;30;40m"
			switch cv.get(x, y) {
			case 1:
				ce = "0;90;100m"
			case 2:
				ce = "0;37;47m"
			case 3:
				ce = "0;97;107m"
			}
			b.WriteString("\033[" + ce + " \033[0m")
		}
		if y != cv.h-1 {
			b.WriteByte('\n')
		}
	}
}
