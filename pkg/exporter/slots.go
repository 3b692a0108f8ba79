package exporter

import "sync"

// objectSlots numbers the objects of a resource: each family of the
// resource keeps an object's lines at its slot, so that one map finds an
// object for all of them, rather than a map in each family. A removed
// object's slot goes to the next new object, so that slots stay fewer
// than the most objects held at once. It is safe for concurrent use.
type objectSlots struct {
	// mu guards every field below.
	mu    sync.Mutex
	slots map[string]int32
	// free are the slots of removed objects, the newest last.
	free []int32
	next int32
	// heads are, by slot, the rendered identity labels of the object
	// (see familyState.heads); nil until a family renders them.
	heads [][]byte
}

func newObjectSlots() *objectSlots { return &objectSlots{slots: map[string]int32{}} }

// uids returns the UIDs of the objects that have slots.
func (o *objectSlots) uids() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]string, 0, len(o.slots))
	for uid := range o.slots {
		out = append(out, uid)
	}
	return out
}

// len returns the number of objects that have slots.
func (o *objectSlots) len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.slots)
}

// assign returns the slot of object uid, giving it one if it has none.
func (o *objectSlots) assign(uid string) int32 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if slot, ok := o.slots[uid]; ok {
		return slot
	}
	var slot int32
	if n := len(o.free); n > 0 {
		slot, o.free = o.free[n-1], o.free[:n-1]
	} else {
		slot = o.next
		o.next++
	}
	o.slots[uid] = slot
	return slot
}

// lookup returns the slot of object uid, if it has one.
func (o *objectSlots) lookup(uid string) (int32, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	slot, ok := o.slots[uid]
	return slot, ok
}

// release frees the slot of object uid, once no family holds lines of it
// there.
func (o *objectSlots) release(uid string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if slot, ok := o.slots[uid]; ok {
		delete(o.slots, uid)
		o.free = append(o.free, slot)
		if int(slot) < len(o.heads) {
			o.heads[slot] = nil
		}
	}
}

// head returns the identity labels of the object at slot, nil when no
// family has rendered them yet.
func (o *objectSlots) head(slot int32) []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.headLocked(slot)
}

func (o *objectSlots) headLocked(slot int32) []byte {
	if int(slot) < len(o.heads) {
		return o.heads[slot]
	}
	return nil
}

// setHead records the identity labels of the object at slot, unless they
// are recorded already, and returns those recorded. They never change while
// the object keeps its slot: they are rendered from its namespace, name and
// UID.
func (o *objectSlots) setHead(slot int32, head []byte) []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	if h := o.headLocked(slot); h != nil {
		return h
	}
	for len(o.heads) <= int(slot) {
		o.heads = append(o.heads, nil)
	}
	o.heads[slot] = head
	return head
}
