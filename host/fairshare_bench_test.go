package host

import (
	"bufio"
	"context"
	"net"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkFairShareLatency measures the p99 of a loopback TCP round trip
// (what each step of an HTTP request waits for) of group a, alone and
// while group b's guests spin on every processor: with a's round trips
// marked Busy (as the server marks a request in flight) and not.
func BenchmarkFairShareLatency(b *testing.B) {
	h, err := New(context.Background(), NewConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(context.Background())
	wasm, err := os.ReadFile("../testdata/guests/wat/loop.wasm")
	if err != nil {
		b.Fatal(err)
	}
	spin, err := h.Load(context.Background(), wasm, LoadOptions{Name: "loop"})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadBytes('\n')
					if err != nil {
						return
					}
					c.Write(line)
				}
			}()
		}
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	p99 := func(n int, busy bool) time.Duration {
		d := make([]time.Duration, n)
		for i := range d {
			start := time.Now()
			var done func()
			if busy {
				done = h.Busy("a")
			}
			conn.Write([]byte("ping\n"))
			if _, err := r.ReadBytes('\n'); err != nil {
				b.Fatal(err)
			}
			if done != nil {
				done()
			}
			d[i] = time.Since(start)
		}
		slices.Sort(d)
		return d[n*99/100]
	}
	n := max(b.N, 200)
	quiet := p99(n, false)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 * runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				spin.Call(ctx, "spin", nil, &CallOptions{Group: "b", Grant: Grant{Limits: Limits{Timeout: time.Second}}})
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	var plain, busy time.Duration
	for range 3 { // interleaved
		plain = max(plain, p99(n/3, false))
		busy = max(busy, p99(n/3, true))
	}
	stop()
	wg.Wait()
	b.ReportMetric(float64(quiet.Microseconds())/1000, "quiet-p99-ms")
	b.ReportMetric(float64(plain.Microseconds())/1000, "noisy-p99-ms")
	b.ReportMetric(float64(busy.Microseconds())/1000, "noisy-busy-p99-ms")
}
