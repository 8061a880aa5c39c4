package httpapi_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/abacusdb/abacus/internal/httpapi"
	"github.com/abacusdb/abacus/internal/servertest"
	"github.com/abacusdb/abacus/internal/testenv"
)

var docsShots = flag.Bool("docs", false, "also write the dashboard screenshots into docs/")

// artifactDir is where the browser test leaves its screenshots:
// $ABACUS_ARTIFACT_DIR, or abacus-artifacts in the temporary directory.
func artifactDir(t *testing.T) string {
	dir := os.Getenv("ABACUS_ARTIFACT_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "abacus-artifacts")
	}
	dir = filepath.Join(dir, "dashboard")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// needChromium returns Debian's chromium, skipping the test without it
// (failing it where ABACUS_REQUIRE_REDIS=1 requires the whole
// environment, as in CI, which installs it).
func needChromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if testenv.Required() {
		t.Fatalf("chromium is not on PATH, and %s=1 requires it: apt-get install chromium (.ci/run does)", testenv.RequireEnv)
	}
	testenv.Skip(t, "no chromium on PATH for the dashboard's browser test")
	return ""
}

// browser starts a headless chromium with a fresh profile, talking to
// nothing but the test's server.
func browser(t *testing.T, width, height int) context.Context {
	exe := needChromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// TestDashboardInBrowser opens the dashboard in chromium on a server
// holding a few series, checks that the series of the filter are drawn
// and named and that the status panel shows INFO's figures, and saves
// screenshots (light, dark, phone width).
func TestDashboardInBrowser(t *testing.T) {
	w := startWeb(t, httpapi.Limits{}, servertest.WithConfig("slowlog-log-slower-than", "0"))
	c := w.inst.Raw(t)
	// Three temperature series and a pressure series over the last hour,
	// one sample every 10 s, from the server's own clock.
	now := time.Now().UnixMilli()
	keys := []string{"temp:kitchen", "temp:lab", "temp:roof"}
	for i, k := range keys {
		w.do(t, "TS.CREATE", k, "LABELS", "type", "temp", "room", strings.TrimPrefix(k, "temp:"), "unit", "°C")
		args := []string{"TS.MADD"}
		for s := int64(0); s < 360; s++ {
			ts := now - 3600_000 + s*10_000
			v := 20 + 3*float64(i) + 2*math.Sin(float64(s)/20+float64(i))
			args = append(args, k, strconv.FormatInt(ts, 10), strconv.FormatFloat(v, 'f', 2, 64))
		}
		w.do(t, args...)
	}
	w.do(t, "TS.ADD", "pressure:lab", "*", "1013", "LABELS", "type", "pressure")
	for i := range 20 {
		w.do(t, "SET", fmt.Sprint("user:", i), "x")
		c.Do("GET", fmt.Sprint("user:", i%30))
	}

	ctx := browser(t, 1280, 800)
	dir := artifactDir(t)
	url := w.base + "/?filter=" + "type%3Dtemp" + "&window=1h"
	if err := chromedp.Do(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(`#series-chart[data-points]`)),
	); err != nil {
		t.Fatalf("dashboard: %v", err)
	}

	// The legend names the three series, in key order, and the canvas has
	// their lines: pixels of the first series' colour.
	legend := must(t, ctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#series-chart .u-legend .u-series .u-label")].slice(1).map(e => e.textContent)`))
	if strings.Join(legend, ",") != strings.Join(keys, ",") {
		t.Errorf("legend %q, want %q", legend, keys)
	}
	points := must(t, ctx, chromedp.Evaluate[string](`document.querySelector("#series-chart").dataset.points`))
	if n, _ := strconv.Atoi(points); n < 3*300 {
		t.Errorf("%s points drawn, want about 3 x 360 buckets of 10 s", points)
	}
	colored := must(t, ctx, chromedp.Evaluate[int](`(() => {
		const cv = document.querySelector("#series-chart canvas");
		const px = cv.getContext("2d").getImageData(0, 0, cv.width, cv.height).data;
		const hex = window.abacusPalette[0];
		const want = [1, 3, 5].map(i => parseInt(hex.slice(i, i + 2), 16));
		let n = 0;
		for (let i = 0; i < px.length; i += 4)
			if (px[i + 3] > 200 && Math.abs(px[i] - want[0]) < 40 && Math.abs(px[i + 1] - want[1]) < 40 && Math.abs(px[i + 2] - want[2]) < 40) n++;
		return n;
	})()`))
	if colored < 200 {
		t.Errorf("the series canvas has %d pixels of the first series' colour: no line drawn", colored)
	}

	// The status panel shows INFO's figures: wait until it has polled after
	// the last change (nothing changes them any more), then compare.
	info := statusInfo(t, w)
	deadline := time.Now().Add(time.Minute)
	for {
		shown := must(t, ctx, chromedp.Evaluate[map[string]string](`({
			keys: document.querySelector("#stat-keys").dataset.value || "",
			keysText: document.querySelector("#stat-keys .value").textContent,
			clients: document.querySelector("#stat-clients").dataset.value || "",
		})`))
		if shown["keys"] == info["keys"] && shown["keysText"] == info["keys"] && shown["clients"] == info["connected_clients"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status panel %v; INFO: keys %s, connected_clients %s", shown, info["keys"], info["connected_clients"])
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Some traffic for a few polls, so that the rates and the mini charts
	// have something to show.
	stop := make(chan struct{})
	done := make(chan struct{})
	load := w.inst.Raw(t)
	go func() {
		defer close(done)
		var batch [][]string
		for i := range 100 {
			batch = append(batch, []string{"GET", fmt.Sprint("user:", i%30)}, []string{"INCR", "hits"})
		}
		req := servertest.Cat(batch...)
		for {
			select {
			case <-stop:
				return
			default:
			}
			load.C.Write(req)
			for range batch {
				if _, err := servertest.ReadReply(load.R); err != nil {
					return
				}
			}
		}
	}()
	waitPolls(t, ctx, 6)
	close(stop)
	<-done
	waitPolls(t, ctx, 1)

	save := func(name string, shot []byte) {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
		if *docsShots {
			if err := os.WriteFile(filepath.Join("..", "..", "docs", name), shot, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The top keys panel ranks the sampled keys by memory: the series
	// with 360 samples before the strings; by access it says why not.
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#top-mem td.k`))); err != nil {
		t.Fatalf("top keys: %v", err)
	}
	top := must(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#top-mem td.k")].map(e => e.textContent)`))
	if len(top) != 20 || !strings.HasPrefix(top[0], "temp:") {
		t.Errorf("top keys by memory: %q", top)
	}
	if txt := must(t, ctx, chromedp.Evaluate[string](`document.querySelector("#top-freq").textContent`)); !strings.Contains(txt, "LFU") {
		t.Errorf("top keys by access under noeviction: %q", txt)
	}
	save("dashboard-status.png", must(t, ctx, chromedp.CaptureScreenshot()))
	must(t, ctx, chromedp.Evaluate[bool](`document.querySelector("#series-h").scrollIntoView(), true`))
	must(t, ctx, chromedp.Sleep(300*time.Millisecond))
	save("dashboard-series.png", must(t, ctx, chromedp.CaptureScreenshot()))

	media := func(scheme string) {
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
			t.Fatal(err)
		}
	}
	media("dark")
	must(t, ctx, chromedp.Evaluate[bool](`window.scrollTo(0, 0), true`))
	must(t, ctx, chromedp.Sleep(time.Second)) // the charts are rebuilt in the dark colours
	save("dashboard-dark.png", must(t, ctx, chromedp.FullScreenshot(100)))
	media("light")
	must(t, ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	must(t, ctx, chromedp.Sleep(time.Second))
	save("dashboard-phone.png", must(t, ctx, chromedp.FullScreenshot(100)))
	// At phone width nothing is wider than the screen.
	if over := must(t, ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - document.documentElement.clientWidth`)); over > 0 {
		t.Errorf("at 390 px the page is %d px wider than the screen", over)
	}
}

// must runs a and returns its value, failing t on an error.
func must[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// statusInfo is INFO's connected_clients and its key count summed over
// the databases.
func statusInfo(t *testing.T, w *web) map[string]string {
	t.Helper()
	text := servertest.BulkBody(t, w.inst.Raw(t).Do("INFO"))
	out := map[string]string{}
	keys := 0
	for _, line := range strings.Split(text, "\r\n") {
		k, v, _ := strings.Cut(line, ":")
		if k == "connected_clients" {
			out[k] = v
		}
		if strings.HasPrefix(k, "db") {
			n, _ := strconv.Atoi(strings.TrimPrefix(strings.Split(v, ",")[0], "keys="))
			keys += n
		}
	}
	out["keys"] = strconv.Itoa(keys)
	return out
}

// waitPolls waits until the page has polled api/status n more times.
func waitPolls(t *testing.T, ctx context.Context, n int) {
	polls := chromedp.Evaluate[int](`+(document.body.dataset.statusPolls || 0)`)
	start := must(t, ctx, polls)
	for must(t, ctx, polls) < start+n {
		time.Sleep(100 * time.Millisecond)
	}
}
