// Package common holds what the benchmark's Go programs share: the kubelet's way of dialing a
// plugin, and nearest-rank percentiles (the same definition as the Java harness's Stats).
package common

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"sort"
	"time"

	"google.golang.org/grpc"
)

// DialTimeout is how long the kubelet's device manager waits for a plugin's socket to answer.
const DialTimeout = 10 * time.Second

// Dial connects to a Unix socket as the kubelet's device manager endpoint does: a blocking dial
// of at most 10 s, no transport security, a context dialer on "unix", authority "localhost".
func Dial(socket string) (*grpc.ClientConn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DialTimeout)
	defer cancel()
	return grpc.DialContext(ctx, socket,
		grpc.WithInsecure(),
		grpc.WithBlock(),
		grpc.WithAuthority("localhost"),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", addr)
		}))
}

// Percentile is the nearest-rank percentile of sorted samples: the smallest sample with at least
// p percent of the samples at or below it.
func Percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(ceil(p/100.0*float64(len(sorted)) - 1e-9))
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

func ceil(x float64) float64 {
	i := float64(int64(x))
	if x > i {
		return i + 1
	}
	return i
}

// Sorted returns a sorted copy.
func Sorted(samples []int64) []int64 {
	s := append([]int64(nil), samples...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	return s
}

// RemoveSockets deletes every socket file directly in dir, as the kubelet does when it starts.
func RemoveSockets(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Type()&os.ModeSocket != 0 {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return nil
}
