// Command stub-plugin is a minimal device plugin on grpc-go, the peer the benchmark compares the
// SDK with: N healthy devices, Allocate answers one DeviceSpec per requested device (any ID is
// accepted, as the kubelet's own stub plugin does) and an environment variable naming them.
// With -register it registers with kubelet.sock in -dir (legacy Register) and re-registers when
// kubelet.sock is created again (inotify on the directory); when its own socket was deleted by a
// restarting kubelet, it serves a new one first.
//
// Usage:
//
//	stub-plugin -dir /var/lib/kubelet/device-plugins -socket go.sock -resource bench.example.com/go \
//	    [-devices 4] [-register] [-preferred] [-prestart]
//
// It prints "serving <socket>" and "registered <resource>" lines and runs until SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	api "dp4jbench/api/v1beta1"
	"dp4jbench/common"
	"google.golang.org/grpc"
)

// env is the variable Allocate answers with, the same as the Java harness's plugins.
const env = "BENCH_DEVICES"

type plugin struct {
	api.UnimplementedDevicePluginServer
	devices   []*api.Device
	preferred bool
	prestart  bool
}

func (p *plugin) GetDevicePluginOptions(context.Context, *api.Empty) (*api.DevicePluginOptions, error) {
	return &api.DevicePluginOptions{PreStartRequired: p.prestart, GetPreferredAllocationAvailable: p.preferred}, nil
}

func (p *plugin) ListAndWatch(_ *api.Empty, s api.DevicePlugin_ListAndWatchServer) error {
	if err := s.Send(&api.ListAndWatchResponse{Devices: p.devices}); err != nil {
		return err
	}
	<-s.Context().Done()
	return nil
}

func (p *plugin) GetPreferredAllocation(_ context.Context, r *api.PreferredAllocationRequest) (*api.PreferredAllocationResponse, error) {
	resp := &api.PreferredAllocationResponse{}
	for _, c := range r.ContainerRequests {
		chosen := append([]string(nil), c.MustIncludeDeviceIDs...)
		for _, id := range c.AvailableDeviceIDs {
			if int32(len(chosen)) >= c.AllocationSize {
				break
			}
			chosen = append(chosen, id)
		}
		resp.ContainerResponses = append(resp.ContainerResponses, &api.ContainerPreferredAllocationResponse{DeviceIDs: chosen})
	}
	return resp, nil
}

func (p *plugin) Allocate(_ context.Context, r *api.AllocateRequest) (*api.AllocateResponse, error) {
	resp := &api.AllocateResponse{}
	for _, c := range r.ContainerRequests {
		cr := &api.ContainerAllocateResponse{Envs: map[string]string{env: strings.Join(c.DevicesIds, ",")}}
		for _, id := range c.DevicesIds {
			cr.Devices = append(cr.Devices, &api.DeviceSpec{ContainerPath: "/dev/" + id, HostPath: "/dev/" + id, Permissions: "rw"})
		}
		resp.ContainerResponses = append(resp.ContainerResponses, cr)
	}
	return resp, nil
}

func (p *plugin) PreStartContainer(context.Context, *api.PreStartContainerRequest) (*api.PreStartContainerResponse, error) {
	return &api.PreStartContainerResponse{}, nil
}

type stub struct {
	mu       sync.Mutex
	plugin   *plugin
	dir      string
	socket   string
	resource string
	server   *grpc.Server
}

// serve (re)starts the gRPC server on the plugin's socket, deleting a stale file first.
func (s *stub) serve() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.server != nil {
		s.server.Stop()
	}
	path := filepath.Join(s.dir, s.socket)
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	s.server = grpc.NewServer()
	api.RegisterDevicePluginServer(s.server, s.plugin)
	go s.server.Serve(l)
	fmt.Println("serving " + path)
	return nil
}

func (s *stub) register() error {
	kubelet := filepath.Join(s.dir, "kubelet.sock")
	// inotify reports kubelet.sock at bind(), before the kubelet listens: a connection attempt in
	// that window is refused, and grpc-go would then back off for a whole second. Wait until the
	// socket accepts connections (at most 10 s), then dial as usual.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		c, err := net.Dial("unix", kubelet)
		if err == nil {
			c.Close()
			break
		}
		time.Sleep(200 * time.Microsecond)
	}
	conn, err := common.Dial(kubelet)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = api.NewRegistrationClient(conn).Register(ctx, &api.RegisterRequest{
		Version: "v1beta1", Endpoint: s.socket, ResourceName: s.resource,
		Options: &api.DevicePluginOptions{PreStartRequired: s.plugin.prestart, GetPreferredAllocationAvailable: s.plugin.preferred}})
	if err == nil {
		fmt.Println("registered " + s.resource)
	}
	return err
}

// watch re-registers every time kubelet.sock is created in the directory, serving again first
// when the kubelet deleted the plugin's socket.
func (s *stub) watch() {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stub-plugin: inotify:", err)
		os.Exit(1)
	}
	if _, err := syscall.InotifyAddWatch(fd, s.dir, syscall.IN_CREATE|syscall.IN_MOVED_TO); err != nil {
		fmt.Fprintln(os.Stderr, "stub-plugin: watch", s.dir+":", err)
		os.Exit(1)
	}
	buf := make([]byte, 64*1024)
	for {
		n, err := syscall.Read(fd, buf)
		if err != nil {
			if err == syscall.EINTR {
				continue
			}
			fmt.Fprintln(os.Stderr, "stub-plugin: inotify read:", err)
			os.Exit(1)
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameBytes := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
			name := strings.TrimRight(string(nameBytes), "\x00")
			off += syscall.SizeofInotifyEvent + int(ev.Len)
			if name != "kubelet.sock" {
				continue
			}
			if _, err := os.Stat(filepath.Join(s.dir, s.socket)); os.IsNotExist(err) {
				if err := s.serve(); err != nil {
					fmt.Fprintln(os.Stderr, "stub-plugin: serve again:", err)
					continue
				}
			}
			if err := s.register(); err != nil {
				fmt.Fprintln(os.Stderr, "stub-plugin: register again:", err)
			}
		}
	}
}

func main() {
	dir := flag.String("dir", "/var/lib/kubelet/device-plugins", "the kubelet's device plugin directory")
	socket := flag.String("socket", "stub.sock", "socket file name in -dir")
	resource := flag.String("resource", "bench.example.com/go", "resource name")
	devices := flag.Int("devices", 4, "number of healthy devices dev-0 ... dev-N-1")
	register := flag.Bool("register", false, "register with kubelet.sock, and again whenever it is created")
	preferred := flag.Bool("preferred", true, "offer GetPreferredAllocation")
	prestart := flag.Bool("prestart", true, "require PreStartContainer")
	flag.Parse()
	p := &plugin{preferred: *preferred, prestart: *prestart}
	for i := 0; i < *devices; i++ {
		p.devices = append(p.devices, &api.Device{ID: fmt.Sprintf("dev-%d", i), Health: "Healthy"})
	}
	s := &stub{plugin: p, dir: *dir, socket: *socket, resource: *resource}
	if err := s.serve(); err != nil {
		fmt.Fprintln(os.Stderr, "stub-plugin: serve:", err)
		os.Exit(1)
	}
	if *register {
		go s.watch() // before the first Register, so a kubelet restart right after is not missed
		if _, err := os.Stat(filepath.Join(*dir, "kubelet.sock")); err == nil {
			if err := s.register(); err != nil {
				fmt.Fprintln(os.Stderr, "stub-plugin: register:", err)
			}
		}
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	s.mu.Lock()
	s.server.Stop()
	s.mu.Unlock()
	os.Remove(filepath.Join(*dir, *socket))
}
