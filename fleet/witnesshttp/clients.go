package witnesshttp

import (
	"container/list"
	"net"
	"net/netip"
	"sync"

	"golang.org/x/time/rate"
)

// clientBook is the token bucket of each client address, at most max of
// them: a new address beyond max takes the place of the one seen least
// recently. An attacker who rotates addresses (or origins: a request is
// counted against its address before its body is read) therefore never
// grows the book beyond max; what rotation buys is a fresh bucket per
// address, and the per-origin buckets and MaxInFlight still bound what
// reaches the witness. An IPv6 client is counted by its /64 (a host
// usually has a whole /64 to rotate in), an IPv4 one by its address.
type clientBook struct {
	mu    sync.Mutex
	max   int
	rate  rate.Limit
	burst int
	byKey map[netip.Prefix]*list.Element // of *clientBucket
	lru   list.List                      // front: seen least recently
}

type clientBucket struct {
	key netip.Prefix
	lim *rate.Limiter
}

func newClientBook(max int, r float64, burst int) *clientBook {
	return &clientBook{max: max, rate: rate.Limit(r), burst: burst, byKey: map[netip.Prefix]*list.Element{}}
}

// allow takes a token of remoteAddr's bucket (http.Request.RemoteAddr:
// HOST:PORT); an address that does not parse is counted as one client.
func (b *clientBook) allow(remoteAddr string) bool {
	key := clientKey(remoteAddr)
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.byKey[key]; e != nil {
		b.lru.MoveToBack(e)
		return e.Value.(*clientBucket).lim.Allow()
	}
	if b.lru.Len() >= b.max {
		old := b.lru.Front()
		b.lru.Remove(old)
		delete(b.byKey, old.Value.(*clientBucket).key)
	}
	cb := &clientBucket{key: key, lim: rate.NewLimiter(b.rate, b.burst)}
	b.byKey[key] = b.lru.PushBack(cb)
	return cb.lim.Allow()
}

// len is the number of clients the book holds.
func (b *clientBook) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lru.Len()
}

// clientKey is the prefix a client is counted by.
func clientKey(remoteAddr string) netip.Prefix {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{} // one bucket for whatever does not parse
	}
	a = a.Unmap().WithZone("")
	bits := 32
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return p
}
