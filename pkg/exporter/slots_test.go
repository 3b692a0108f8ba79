package exporter

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestObjectSlots assigns and releases slots at random from several
// goroutines and checks that live objects never share a slot, that an
// object keeps its slot until it is released, and that there are never more
// slots than the most objects live at once.
func TestObjectSlots(t *testing.T) {
	o := newObjectSlots()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1)) //nolint:gosec // G404: seeded test data, not a secret
			mine := map[string]int32{}                 // each goroutine owns its own objects
			for range 5000 {
				uid := fmt.Sprintf("g%d-u%d", g, rng.IntN(50))
				if slot, ok := mine[uid]; ok && rng.IntN(3) == 0 {
					if got, _ := o.lookup(uid); got != slot {
						t.Errorf("%s: slot %d, was given %d", uid, got, slot)
						return
					}
					o.release(uid)
					delete(mine, uid)
					continue
				}
				slot := o.assign(uid)
				if was, ok := mine[uid]; ok && was != slot {
					t.Errorf("%s: slot %d, was given %d", uid, slot, was)
					return
				}
				mine[uid] = slot
			}
		}()
	}
	wg.Wait()
	seen := map[int32]string{}
	for uid, slot := range o.slots {
		if other, dup := seen[slot]; dup {
			t.Fatalf("%s and %s share slot %d", uid, other, slot)
		}
		seen[slot] = uid
	}
	if o.next > 4*50 {
		t.Fatalf("%d slots for at most %d objects live at once", o.next, 4*50)
	}
	if int(o.next) != len(o.slots)+len(o.free) {
		t.Fatalf("%d slots: %d assigned and %d free", o.next, len(o.slots), len(o.free))
	}
}
