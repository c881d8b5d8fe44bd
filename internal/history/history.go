// Package history records concurrent reads and writes on the groups of a
// cluster and checks every read against the acknowledged writes.
//
// The rule a read must follow (a register's, relaxed for a cache): a Get
// of key k that returns value v is right if some write of v to k began
// before the Get ended, and no later write superseded it before the Get
// began. A write W2 supersedes W if W2 began after W ended and W2 was
// acknowledged (returned nil) before the Get began. A write that failed,
// or was only partly confirmed, never supersedes anything: it may show up,
// or not, at any time after it began. The source's value of a key before
// any write counts as a write acknowledged before the history began.
//
// A write is what a user of the cache does: it changes the source first
// (Source.Put, or Source.Delete), then tells the cache (Group.Set with the
// same value, or Group.Remove). So a value a node loads from the source is
// never older than the last write that reached the source; what the check
// catches is a node that keeps, or serves, a value an acknowledged write
// replaced: a load that began before the write and stored its value after,
// a copy that a write did not reach, a stale answer from a peer.
package history

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/geecache/geecache/getter"
)

// Missing is the value of a key the source does not hold: a Get that
// fails with getter.ErrNotFound reads it, and a Delete writes it.
const Missing = "\x00missing"

// A Source is the source of truth of a history's keys, shared by every
// node's Getter: a map of strings, safe for concurrent use.
type Source struct {
	mu sync.Mutex
	m  map[string]string
}

// NewSource returns a source that holds each key of keys with the value
// Initial(key).
func NewSource(keys []string) *Source {
	s := &Source{m: make(map[string]string, len(keys))}
	for _, k := range keys {
		s.m[k] = Initial(k)
	}
	return s
}

// Initial is a key's value before any write.
func Initial(key string) string { return "src:" + key }

// Put makes v key's value.
func (s *Source) Put(key, v string) {
	s.mu.Lock()
	s.m[key] = v
	s.mu.Unlock()
}

// Delete removes key.
func (s *Source) Delete(key string) {
	s.mu.Lock()
	delete(s.m, key)
	s.mu.Unlock()
}

// Get is the Getter of every node: key's value, or getter.ErrNotFound.
func (s *Source) Get(_ context.Context, key string) ([]byte, error) {
	s.mu.Lock()
	v, ok := s.m[key]
	s.mu.Unlock()
	if !ok {
		return nil, getter.ErrNotFound
	}
	return []byte(v), nil
}

// An Op is one operation of a history: a read of one key (a Get, or one
// key of a GetMany), or a write of one key (a Set, or a Remove, alone or
// in a RemoveMany), over [Start, End] of the recorder's clock.
type Op struct {
	Node       int
	What       string // "get", "getmany", "set", "remove", "removemany"
	Key, Value string // a read's answer (Missing: not found); a write's value
	Start, End time.Duration
	Write      bool
	// Acked is a write that returned nil; OK a read that returned a value
	// or a "not found" (a read that failed reads nothing).
	Acked, OK bool
}

// A Recorder keeps the operations of a history, timed on one monotonic
// clock. Safe for concurrent use.
type Recorder struct {
	start time.Time
	mu    sync.Mutex
	ops   []Op
}

// NewRecorder starts a recorder's clock.
func NewRecorder() *Recorder { return &Recorder{start: time.Now()} }

// Now is the time since the recorder started.
func (r *Recorder) Now() time.Duration { return time.Since(r.start) }

// Add records ops.
func (r *Recorder) Add(ops ...Op) {
	r.mu.Lock()
	r.ops = append(r.ops, ops...)
	r.mu.Unlock()
}

// Ops returns what was recorded.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ops)
}

// A Report is what Check found: how much it checked, and each read of a
// value that an acknowledged write had replaced.
type Report struct {
	Reads, FailedReads int // checked, and failed (not checked)
	Writes, Acked      int
	Violations         []Violation
}

// A Violation is a read of a replaced value, with the write that replaced
// it.
type Violation struct {
	Read, By Op
}

func (r Report) String() string {
	return fmt.Sprintf("%d reads checked (%d failed), %d writes (%d acknowledged), %d reads of a replaced value",
		r.Reads, r.FailedReads, r.Writes, r.Acked, len(r.Violations))
}

// Detail describes up to n violations, one a line.
func (r Report) Detail(n int) string {
	var b strings.Builder
	for _, v := range r.Violations[:min(n, len(r.Violations))] {
		fmt.Fprintf(&b, "node%d %s(%q) = %q over [%v, %v]; replaced by node%d %s(%q, %q) over [%v, %v]\n",
			v.Read.Node, v.Read.What, v.Read.Key, v.Read.Value, v.Read.Start, v.Read.End,
			v.By.Node, v.By.What, v.By.Key, v.By.Value, v.By.Start, v.By.End)
	}
	return b.String()
}

// Check checks every read of ops against the writes of ops, by the rule
// in the package doc.
func Check(ops []Op) Report {
	var rep Report
	writes := map[string][]Op{}
	var reads []Op
	for _, op := range ops {
		if !op.Write {
			if op.OK {
				reads = append(reads, op)
			} else {
				rep.FailedReads++
			}
			continue
		}
		rep.Writes++
		if op.Acked {
			rep.Acked++
		} else {
			op.End = math.MaxInt64 // it may show up at any time after it began
		}
		writes[op.Key] = append(writes[op.Key], op)
	}
	type keyWrites struct {
		byStart []Op             // sorted by Start
		minEnd  []time.Duration  // minEnd[i]: the earliest End of byStart[i:]
		byValue map[string][]int // indexes into byStart, in increasing order
	}
	index := map[string]*keyWrites{}
	kw := func(key string) *keyWrites {
		if w := index[key]; w != nil {
			return w
		}
		ws := append(writes[key], Op{Key: key, Value: Initial(key), Write: true, Acked: true,
			Start: math.MinInt64, End: math.MinInt64 + 1})
		sort.Slice(ws, func(i, j int) bool { return ws[i].Start < ws[j].Start })
		w := &keyWrites{byStart: ws, minEnd: make([]time.Duration, len(ws)+1), byValue: map[string][]int{}}
		w.minEnd[len(ws)] = math.MaxInt64
		for i := len(ws) - 1; i >= 0; i-- {
			w.minEnd[i] = min(ws[i].End, w.minEnd[i+1])
		}
		for i, op := range ws {
			w.byValue[op.Value] = append(w.byValue[op.Value], i)
		}
		index[key] = w
		return w
	}
	for _, rd := range reads {
		rep.Reads++
		w := kw(rd.Key)
		ok := false
		cands := w.byValue[rd.Value]
		// The writes of this value that began before the read ended, the
		// latest first: the latest is the one most likely still current.
		n := sort.Search(len(cands), func(j int) bool { return w.byStart[cands[j]].Start >= rd.End })
		for c := n - 1; c >= 0; c-- {
			cand := w.byStart[cands[c]]
			// The writes that began after cand ended; the earliest of
			// them to be acknowledged supersedes cand from its End on.
			j := sort.Search(len(w.byStart), func(j int) bool { return w.byStart[j].Start > cand.End })
			if w.minEnd[j] >= rd.Start {
				ok = true
				break
			}
		}
		if !ok {
			// The last acknowledged write that ended before the read
			// began: the value the read should have seen, or a newer one.
			by := Op{Key: rd.Key, What: "no write of this value"}
			for _, s := range w.byStart {
				if s.Acked && s.End < rd.Start && (by.What == "no write of this value" || s.End > by.End) {
					by = s
				}
			}
			rep.Violations = append(rep.Violations, Violation{Read: rd, By: by})
		}
	}
	return rep
}

// ErrViolation is wrapped by the error of a history with reads of replaced
// values.
var ErrViolation = errors.New("reads of a replaced value")
