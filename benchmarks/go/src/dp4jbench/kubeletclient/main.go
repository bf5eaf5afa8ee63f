// Command kubelet-client drives device plugins over their Unix sockets the way the kubelet's
// device manager does (one connection per plugin, dialed like its endpoint), and prints the
// latency of Allocate calls, or of the whole admit path, as machine-readable lines:
//
//	result target=<name> concurrency=<n> calls=<n> p50=<ns> p90=<ns> p99=<ns> p999=<ns> max=<ns> ops=<calls/s> rpcs=<calls to the plugin per operation>
//
// Usage:
//
//	kubelet-client -target name=/path/plugin.sock=dev-0,dev-1 [-target ...] \
//	    [-mode allocate|admit] [-concurrency 1,4,16] [-warmup 20000] [-calls 20000] [-rounds 4]
//
// For each concurrency, every target gets its warm-up calls, then the measured calls run in
// rounds: one block per target per round, the order reversed every round, so drift on the machine
// hits every target alike.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	api "dp4jbench/api/v1beta1"
	"dp4jbench/common"
	"google.golang.org/grpc"
)

type target struct {
	name    string
	socket  string
	ids     []string
	conn    *grpc.ClientConn
	client  api.DevicePluginClient
	options *api.DevicePluginOptions
}

type targets []*target

func (t *targets) String() string { return fmt.Sprint(len(*t)) }

func (t *targets) Set(v string) error {
	parts := strings.SplitN(v, "=", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return fmt.Errorf("want name=socket=id[,id...], got %q", v)
	}
	*t = append(*t, &target{name: parts[0], socket: parts[1], ids: strings.Split(parts[2], ",")})
	return nil
}

func main() {
	var ts targets
	flag.Var(&ts, "target", "name=socket=id[,id...]; repeat for each plugin")
	mode := flag.String("mode", "allocate", "allocate: one Allocate of one device; admit: GetPreferredAllocation (if offered) -> Allocate -> PreStartContainer (if required)")
	conc := flag.String("concurrency", "1,4,16", "comma-separated concurrency levels")
	warmup := flag.Int("warmup", 20000, "calls per target and concurrency before measuring")
	calls := flag.Int("calls", 20000, "measured calls per target and concurrency")
	rounds := flag.Int("rounds", 4, "blocks per target the measured calls are split into")
	flag.Parse()
	if len(ts) == 0 {
		fail("no -target given")
	}
	if *mode != "allocate" && *mode != "admit" {
		fail("-mode must be allocate or admit, got " + *mode)
	}
	var levels []int
	for _, c := range strings.Split(*conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 {
			fail("bad -concurrency " + *conc)
		}
		levels = append(levels, n)
	}
	if *rounds < 1 || *calls < *rounds {
		fail("-calls must be at least -rounds")
	}
	for _, t := range ts {
		conn, err := common.Dial(t.socket)
		if err != nil {
			fail(fmt.Sprintf("cannot dial %s at %s: %v", t.name, t.socket, err))
		}
		t.conn = conn
		t.client = api.NewDevicePluginClient(conn)
		t.options, err = t.client.GetDevicePluginOptions(context.Background(), &api.Empty{})
		if err != nil {
			fail(fmt.Sprintf("GetDevicePluginOptions of %s: %v", t.name, err))
		}
		// Check once that the plugin answers the way the kubelet needs.
		if err := call(t, *mode, 0); err != nil {
			fail(fmt.Sprintf("%s: %v", t.name, err))
		}
	}
	perRound := *calls / *rounds
	for _, c := range levels {
		for _, t := range ts {
			if _, err := run(t, *mode, c, *warmup, nil); err != nil {
				fail(fmt.Sprintf("warm-up of %s: %v", t.name, err))
			}
		}
		lat := map[*target][]int64{}
		wall := map[*target]time.Duration{}
		order := append([]*target(nil), ts...)
		for r := 0; r < *rounds; r++ {
			for _, t := range order {
				buf := make([]int64, perRound)
				took, err := run(t, *mode, c, perRound, buf)
				if err != nil {
					fail(fmt.Sprintf("%s at concurrency %d: %v", t.name, c, err))
				}
				lat[t] = append(lat[t], buf...)
				wall[t] += took
			}
			for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
				order[i], order[j] = order[j], order[i]
			}
		}
		for _, t := range ts {
			s := common.Sorted(lat[t])
			fmt.Printf("result target=%s concurrency=%d calls=%d p50=%d p90=%d p99=%d p999=%d max=%d ops=%.1f rpcs=%d\n",
				t.name, c, len(s), common.Percentile(s, 50), common.Percentile(s, 90),
				common.Percentile(s, 99), common.Percentile(s, 99.9), s[len(s)-1],
				float64(len(s))/wall[t].Seconds(), rpcs(t, *mode))
		}
	}
	for _, t := range ts {
		t.conn.Close()
	}
}

// run makes n calls from c goroutines; latencies go to out when it is not nil.
func run(t *target, mode string, c, n int, out []int64) (time.Duration, error) {
	var next int64 = -1
	var wg sync.WaitGroup
	var firstErr atomic.Value
	start := time.Now()
	for g := 0; g < c; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(atomic.AddInt64(&next, 1))
				if i >= n || firstErr.Load() != nil {
					return
				}
				t0 := time.Now()
				if err := call(t, mode, i); err != nil {
					firstErr.Store(err)
					return
				}
				if out != nil {
					out[i] = int64(time.Since(t0))
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return 0, err
	}
	return time.Since(start), nil
}

// call makes the i-th request: one device, rotating over the target's devices.
func call(t *target, mode string, i int) error {
	ctx := context.Background() // the kubelet sets no deadline on these calls
	id := t.ids[i%len(t.ids)]
	if mode == "admit" && t.options.GetPreferredAllocationAvailable {
		pr, err := t.client.GetPreferredAllocation(ctx, &api.PreferredAllocationRequest{
			ContainerRequests: []*api.ContainerPreferredAllocationRequest{{
				AvailableDeviceIDs: rotate(t.ids, i), AllocationSize: 1}}})
		if err != nil {
			return fmt.Errorf("GetPreferredAllocation: %v", err)
		}
		if len(pr.ContainerResponses) == 1 && len(pr.ContainerResponses[0].DeviceIDs) == 1 {
			id = pr.ContainerResponses[0].DeviceIDs[0]
		}
	}
	r, err := t.client.Allocate(ctx, &api.AllocateRequest{
		ContainerRequests: []*api.ContainerAllocateRequest{{DevicesIds: []string{id}}}})
	if err != nil {
		return fmt.Errorf("Allocate %s: %v", id, err)
	}
	if len(r.ContainerResponses) != 1 {
		return fmt.Errorf("Allocate answered %d container responses for one container request", len(r.ContainerResponses))
	}
	if mode == "admit" && t.options.PreStartRequired {
		if _, err := t.client.PreStartContainer(ctx, &api.PreStartContainerRequest{DevicesIds: []string{id}}); err != nil {
			return fmt.Errorf("PreStartContainer: %v", err)
		}
	}
	return nil
}

// rpcs is the number of calls one measured operation makes to the plugin.
func rpcs(t *target, mode string) int {
	if mode != "admit" {
		return 1
	}
	n := 1
	if t.options.GetPreferredAllocationAvailable {
		n++
	}
	if t.options.PreStartRequired {
		n++
	}
	return n
}

// rotate returns ids starting at i: the kubelet's available IDs come in no fixed order.
func rotate(ids []string, i int) []string {
	k := i % len(ids)
	return append(append([]string(nil), ids[k:]...), ids[:k]...)
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "kubelet-client: "+msg)
	os.Exit(2)
}
