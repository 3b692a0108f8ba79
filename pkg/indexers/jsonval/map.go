package jsonval

import (
	"encoding"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

var (
	stringType    = reflect.TypeFor[string]()
	stringMapType = reflect.TypeFor[map[string]string]()
)

// mapValue presents a non-nil Go map as a JSON object: keys are strings (the
// key itself, its MarshalText or its decimal form), iterated in sorted order.
type mapValue struct {
	info *typeInfo // kindMap
	v    reflect.Value
}

var (
	_ traits.Mapper   = (*mapValue)(nil)
	_ traits.Zeroer   = (*mapValue)(nil)
	_ traits.Foldable = (*mapValue)(nil)
)

// Find implements traits.Mapper.
func (m *mapValue) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok {
		return invalidKey(key)
	}
	if m.info.typ == stringMapType && m.v.CanInterface() {
		// Labels, annotations, selectors: no reflection.
		s, found := m.v.Interface().(map[string]string)[string(k)]
		if found {
			return stringValue(s), true
		}
		if !strings.ContainsRune(string(k), utf8.RuneError) {
			return nil, false
		}
	}
	mv, found := m.lookup(string(k))
	if !found {
		return nil, false
	}
	return m.info.elem.value(mv), true
}

// lookup returns the map element whose JSON key is k.
func (m *mapValue) lookup(k string) (reflect.Value, bool) {
	kt := m.info.typ.Key()
	switch m.info.key {
	case keyString:
		kv := reflect.ValueOf(k)
		if kt != stringType {
			kv = kv.Convert(kt)
		}
		if mv := m.v.MapIndex(kv); mv.IsValid() {
			return mv, true
		}
		if !strings.ContainsRune(k, utf8.RuneError) {
			return reflect.Value{}, false
		}
		// The key may be one with invalid UTF-8, which JSON replaces.
	case keyInt:
		n, err := strconv.ParseInt(k, 10, 64)
		if err != nil || strconv.FormatInt(n, 10) != k {
			return reflect.Value{}, false
		}
		kv := reflect.New(kt).Elem()
		if kv.OverflowInt(n) {
			return reflect.Value{}, false
		}
		kv.SetInt(n)
		mv := m.v.MapIndex(kv)
		return mv, mv.IsValid()
	case keyUint:
		n, err := strconv.ParseUint(k, 10, 64)
		if err != nil || strconv.FormatUint(n, 10) != k {
			return reflect.Value{}, false
		}
		kv := reflect.New(kt).Elem()
		if kv.OverflowUint(n) {
			return reflect.Value{}, false
		}
		kv.SetUint(n)
		mv := m.v.MapIndex(kv)
		return mv, mv.IsValid()
	}
	key := reflect.New(kt).Elem() // set in place, not allocated per entry
	for it := m.v.MapRange(); it.Next(); {
		key.SetIterKey(it)
		if name, err := m.keyName(key); err == nil && name == k {
			return it.Value(), true
		}
	}
	return reflect.Value{}, false
}

// keyName returns the JSON object key of map key k, as encoding/json does.
func (m *mapValue) keyName(k reflect.Value) (string, error) {
	switch m.info.key {
	case keyString:
		return validUTF8(k.String()), nil
	case keyInt:
		return strconv.FormatInt(k.Int(), 10), nil
	case keyUint:
		return strconv.FormatUint(k.Uint(), 10), nil
	}
	if k.Kind() == reflect.Pointer && k.IsNil() {
		return "", nil
	}
	b, err := k.Interface().(encoding.TextMarshaler).MarshalText()
	if err != nil {
		return "", err
	}
	return validUTF8(string(b)), nil
}

// keys returns the JSON object keys, sorted.
func (m *mapValue) keys() ([]string, error) {
	keys := make([]string, 0, m.v.Len())
	if m.info.typ == stringMapType && m.v.CanInterface() {
		for k := range m.v.Interface().(map[string]string) {
			keys = append(keys, validUTF8(k))
		}
	} else {
		key := reflect.New(m.info.typ.Key()).Elem() // set in place, not allocated per entry
		for it := m.v.MapRange(); it.Next(); {
			key.SetIterKey(it)
			k, err := m.keyName(key)
			if err != nil {
				return nil, err
			}
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// Get implements traits.Indexer.
func (m *mapValue) Get(key ref.Val) ref.Val { return getOrErr(m, key) }

// Fold implements traits.Foldable: the entries in the order of their keys,
// as Iterator and Get give them, with each value read from the map by a
// key made once rather than for each.
func (m *mapValue) Fold(f traits.Folder) {
	if m.info.key != keyString {
		m.foldByIterator(f)
		return
	}
	keys, err := m.keys()
	if err != nil {
		m.foldByIterator(f)
		return
	}
	var strs map[string]string
	if m.info.typ == stringMapType && m.v.CanInterface() {
		strs = m.v.Interface().(map[string]string)
	}
	kv := reflect.New(m.info.typ.Key()).Elem() // set in place, not allocated per entry
	for _, k := range keys {
		if !f.FoldEntry(types.String(k), m.foldValue(strs, kv, k)) {
			return
		}
	}
}

// foldByIterator folds the entries as cel-go folds a map that has no Fold:
// each key its Iterator gives, with its value from Get.
func (m *mapValue) foldByIterator(f traits.Folder) {
	for it := m.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		if !f.FoldEntry(k, m.Get(k)) {
			return
		}
	}
}

// foldValue returns the value of key k for Fold, which reads the map of
// strings strs when it is not nil, else the map with kv set to k.
func (m *mapValue) foldValue(strs map[string]string, kv reflect.Value, k string) ref.Val {
	if strs != nil {
		if s, found := strs[k]; found {
			return stringValue(s)
		}
	} else {
		kv.SetString(k)
		if mv := m.v.MapIndex(kv); mv.IsValid() {
			return m.info.elem.value(mv)
		}
	}
	return m.Get(types.String(k)) // a key with invalid UTF-8, which JSON replaced
}

// Contains implements traits.Container.
func (m *mapValue) Contains(key ref.Val) ref.Val {
	_, found := m.Find(key)
	return types.Bool(found)
}

// Size implements traits.Sizer.
func (m *mapValue) Size() ref.Val { return types.Int(m.v.Len()) }

// IsZeroValue implements traits.Zeroer.
func (m *mapValue) IsZeroValue() bool { return m.v.Len() == 0 }

// Iterator implements traits.Iterable: the keys in sorted order.
func (m *mapValue) Iterator() traits.Iterator {
	keys, err := m.keys()
	if err != nil {
		return &keyIterator{err: types.NewErr("json: error calling MarshalText for a key of %v: %v", m.info.typ, err)}
	}
	return &keyIterator{keys: keys}
}

// ConvertToNative implements ref.Val; see convertToNative.
func (m *mapValue) ConvertToNative(t reflect.Type) (any, error) {
	return convertToNative(m, m.v, t)
}

// ConvertToType implements ref.Val.
func (m *mapValue) ConvertToType(t ref.Type) ref.Val { return convertToType(m, types.MapType, t) }

// Equal implements ref.Val: equal to any map with equal entries.
func (m *mapValue) Equal(other ref.Val) ref.Val { return mapEqual(m, other) }

// Type implements ref.Val.
func (m *mapValue) Type() ref.Type { return types.MapType }

// Value implements ref.Val: the wrapped map, which must not be modified.
func (m *mapValue) Value() any { return goValue(m.v) }

func (m *mapValue) String() string { return types.Format(m) }

// keyIterator yields precomputed map keys, or one error.
type keyIterator struct {
	iterator
	keys []string
	next int
	err  ref.Val
}

func (it *keyIterator) HasNext() ref.Val {
	return types.Bool(it.err != nil || it.next < len(it.keys))
}

func (it *keyIterator) Next() ref.Val {
	if it.err != nil {
		err := it.err
		it.err = nil
		return err
	}
	if it.next >= len(it.keys) {
		return errNoMoreElements
	}
	k := it.keys[it.next]
	it.next++
	return types.String(k)
}
