// Command fake-kubelet is the registration side of the kubelet's device manager, written on the
// same grpc-go stack: it serves kubelet.sock (v1beta1.Registration); on Register it dials the
// plugin back (blocking, 10 s), asks GetDevicePluginOptions before answering, and opens
// ListAndWatch, as the kubelet does. It times each step of every registration, relative to the
// moment kubelet.sock was served, and restarts like the kubelet: stop serving, close every plugin
// connection, delete every socket in the directory, serve kubelet.sock again.
//
// Usage:
//
//	fake-kubelet -dir <plugin dir> [-restarts 30] [-warmup 5] [-pause 0s] [-cold-idle 60s] [-series 0] [-series-gap 100ms] [-timeout 60s]
//
// Lines printed (times in ns since kubelet.sock was served):
//
//	registered resource=<r> endpoint=<e> register=<ns> options=<ns> list=<ns> register_unix=<ns> list_unix=<ns>
//	  the first registration; *_unix are wall-clock instants (ns since the epoch), for a process
//	  start timed by another program on the same machine
//	cold first=<ns>   with -cold-idle: one Allocate right after the first list
//	idle allocate=<ns> idle_seconds=<s>   with -cold-idle: one Allocate after the idle time
//	series i=<n> allocate=<ns>   with -cold-idle and -series: the Allocates after that one, in order
//	restart i=<n> register=<ns> options=<ns> list=<ns>   each measured restart (warm-up restarts have i < 0)
//	done
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	api "dp4jbench/api/v1beta1"
	"dp4jbench/common"
	"google.golang.org/grpc"
)

// registration is what one Register led to, in the kubelet's order.
type registration struct {
	resource, endpoint string
	register           time.Time // Register received
	options            time.Time // GetDevicePluginOptions answered
	list               time.Time // first ListAndWatch list received
	devices            []*api.Device
	client             api.DevicePluginClient
}

type kubelet struct {
	api.UnimplementedRegistrationServer
	dir string

	mu     sync.Mutex
	server *grpc.Server
	conns  []*grpc.ClientConn
	served time.Time
	events chan registration
}

func (k *kubelet) Register(_ context.Context, r *api.RegisterRequest) (*api.Empty, error) {
	reg := registration{resource: r.ResourceName, endpoint: r.Endpoint, register: time.Now()}
	if r.Version != "v1beta1" {
		return nil, fmt.Errorf("requested API version %q is not supported by kubelet. Supported version is [\"v1beta1\"]", r.Version)
	}
	conn, err := common.Dial(filepath.Join(k.dir, r.Endpoint))
	if err != nil {
		return nil, fmt.Errorf("cannot dial the plugin at %s: %v", r.Endpoint, err)
	}
	k.mu.Lock()
	k.conns = append(k.conns, conn)
	events := k.events
	k.mu.Unlock()
	client := api.NewDevicePluginClient(conn)
	if _, err := client.GetDevicePluginOptions(context.Background(), &api.Empty{}); err != nil {
		return nil, fmt.Errorf("GetDevicePluginOptions: %v", err)
	}
	reg.options = time.Now()
	reg.client = client
	// The kubelet starts its ListAndWatch client before it answers Register.
	go func() {
		stream, err := client.ListAndWatch(context.Background(), &api.Empty{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake-kubelet: ListAndWatch:", err)
			return
		}
		first := true
		for {
			list, err := stream.Recv()
			if err != nil {
				return // connection closed by a restart, or the plugin went away
			}
			if first {
				first = false
				reg.list = time.Now()
				reg.devices = list.Devices
				events <- reg
			}
		}
	}()
	return &api.Empty{}, nil
}

// serve deletes every socket in the directory, then serves kubelet.sock: the kubelet's start.
func (k *kubelet) serve() error {
	if err := common.RemoveSockets(k.dir); err != nil {
		return err
	}
	l, err := net.Listen("unix", filepath.Join(k.dir, "kubelet.sock"))
	if err != nil {
		return err
	}
	s := grpc.NewServer()
	api.RegisterRegistrationServer(s, k)
	k.mu.Lock()
	k.server = s
	k.served = time.Now()
	k.events = make(chan registration, 16)
	k.mu.Unlock()
	go s.Serve(l)
	return nil
}

// stop ends serving and closes every connection to plugins: the kubelet process going away.
func (k *kubelet) stop() {
	k.mu.Lock()
	s, conns := k.server, k.conns
	k.conns = nil
	k.mu.Unlock()
	s.Stop()
	for _, c := range conns {
		c.Close()
	}
}

func (k *kubelet) await(timeout time.Duration) (registration, time.Time, error) {
	k.mu.Lock()
	events, served := k.events, k.served
	k.mu.Unlock()
	select {
	case r := <-events:
		return r, served, nil
	case <-time.After(timeout):
		return registration{}, served, errors.New("no plugin registered and listed its devices within " + timeout.String())
	}
}

func main() {
	dir := flag.String("dir", "", "the device plugin directory (created if missing)")
	restarts := flag.Int("restarts", 0, "measured restarts")
	warmup := flag.Int("warmup", 5, "restarts before measuring")
	pause := flag.Duration("pause", 0, "idle time before each restart (a real kubelet is down for seconds; the plugin is idle in between)")
	coldIdle := flag.Duration("cold-idle", -1, "when >= 0: Allocate one device right after the first list, and again after this idle time")
	series := flag.Int("series", 0, "with -cold-idle: this many more Allocates after the one after idle, -series-gap apart, each printed (a node's Allocates come far apart: does the latency fall as the plugin's code warms up?)")
	seriesGap := flag.Duration("series-gap", 100*time.Millisecond, "time between the -series Allocates")
	timeout := flag.Duration("timeout", 60*time.Second, "longest wait for a registration")
	flag.Parse()
	if *dir == "" {
		fail("-dir is required")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fail(err.Error())
	}
	k := &kubelet{dir: *dir}
	if err := k.serve(); err != nil {
		fail("serve: " + err.Error())
	}
	fmt.Println("serving " + filepath.Join(*dir, "kubelet.sock"))
	r, served, err := k.await(*timeout)
	if err != nil {
		fail(err.Error())
	}
	fmt.Printf("registered resource=%s endpoint=%s register=%d options=%d list=%d register_unix=%d list_unix=%d\n",
		r.resource, r.endpoint, r.register.Sub(served), r.options.Sub(served), r.list.Sub(served),
		r.register.UnixNano(), r.list.UnixNano())
	if *coldIdle >= 0 {
		if len(r.devices) == 0 {
			fail("the plugin listed no device")
		}
		first, err := allocate(r)
		if err != nil {
			fail(err.Error())
		}
		fmt.Printf("cold first=%d\n", first)
		time.Sleep(*coldIdle) // the idle time is what is measured against: no event to wait for
		idle, err := allocate(r)
		if err != nil {
			fail(err.Error())
		}
		fmt.Printf("idle allocate=%d idle_seconds=%g\n", idle, coldIdle.Seconds())
		for i := 1; i <= *series; i++ {
			time.Sleep(*seriesGap)
			d, err := allocate(r)
			if err != nil {
				fail(err.Error())
			}
			fmt.Printf("series i=%d allocate=%d\n", i, d)
		}
	}
	for i := -*warmup; i < *restarts; i++ {
		time.Sleep(*pause)
		k.stop()
		if err := k.serve(); err != nil {
			fail("serve again: " + err.Error())
		}
		r, served, err := k.await(*timeout)
		if err != nil {
			fail(fmt.Sprintf("restart %d: %v", i, err))
		}
		if i >= 0 {
			fmt.Printf("restart i=%d register=%d options=%d list=%d\n", i,
				r.register.Sub(served), r.options.Sub(served), r.list.Sub(served))
		}
	}
	k.stop()
	fmt.Println("done")
}

// allocate times one Allocate of the first listed device on the kubelet's connection.
func allocate(r registration) (time.Duration, error) {
	t0 := time.Now()
	resp, err := r.client.Allocate(context.Background(), &api.AllocateRequest{
		ContainerRequests: []*api.ContainerAllocateRequest{{DevicesIds: []string{r.devices[0].ID}}}})
	took := time.Since(t0)
	if err != nil {
		return 0, fmt.Errorf("Allocate %s: %v", r.devices[0].ID, err)
	}
	if len(resp.ContainerResponses) != 1 {
		return 0, fmt.Errorf("Allocate answered %d container responses for one container request", len(resp.ContainerResponses))
	}
	return took, nil
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "fake-kubelet: "+msg)
	os.Exit(2)
}
