package host_test

import (
	"fmt"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/skillhost/skillhost/host"
)

// BenchmarkSpinnersUnderGC runs cores+2 guests spinning until their 100 ms
// deadline while garbage collections are forced every 5 ms, and a
// well-behaved guest is called over and over beside them. It reports how
// late the last spinner stopped past its deadline (overshoot-ms) and the
// good call's p99 latency against its p99 on a quiet host (p99-ratio).
func BenchmarkSpinnersUnderGC(b *testing.B) {
	for _, metered := range []bool{true, false} {
		b.Run(fmt.Sprintf("metered=%v", metered), func(b *testing.B) {
			h := newHost(b, testConfig().WithMetering(metered))
			spin := load(b, h, "wat/loop.wasm")
			gospin := load(b, h, "go/gohostile/gohostile.wasm")
			good := load(b, h, "go/gobench/gobench.wasm")
			const deadline = 100 * time.Millisecond
			goodCalls := func(stop <-chan struct{}, n int) []time.Duration {
				var lat []time.Duration
				for i := 0; n == 0 || i < n; i++ {
					select {
					case <-stop:
						return lat
					default:
					}
					start := time.Now()
					if _, err := call(good, "echo", "ping", host.Grant{}); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(start))
				}
				return lat
			}
			quiet := p99(goodCalls(nil, 200))
			var overshoot, loaded time.Duration
			b.ResetTimer()
			for range b.N {
				n := runtime.NumCPU() + 2
				var wg sync.WaitGroup
				late := make([]time.Duration, n)
				for i := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						m := spin
						if i%2 == 1 {
							m = gospin
						}
						start := time.Now()
						call(m, "spin", "", host.Grant{Limits: host.Limits{Timeout: deadline}})
						late[i] = time.Since(start) - deadline
					}()
				}
				stop := make(chan struct{})
				go func() {
					for {
						select {
						case <-stop:
							return
						case <-time.After(5 * time.Millisecond):
							runtime.GC()
						}
					}
				}()
				latCh := make(chan []time.Duration)
				go func() { latCh <- goodCalls(stop, 0) }()
				wg.Wait()
				close(stop)
				loaded = max(loaded, p99(<-latCh))
				for _, l := range late {
					overshoot = max(overshoot, l)
				}
			}
			b.ReportMetric(float64(overshoot)/1e6, "overshoot-ms")
			b.ReportMetric(float64(loaded)/float64(quiet), "p99-ratio")
		})
	}
}

func p99(lat []time.Duration) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lat[len(lat)*99/100]
}
