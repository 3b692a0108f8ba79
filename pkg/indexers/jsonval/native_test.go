package jsonval

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Types exercising the encoding/json rules that API types rely on, and some
// they do not.

type inlineMeta struct {
	Kind string `json:"kind,omitempty"`
}

type inner struct {
	A string `json:"a"`
	B int    `json:"b,omitempty"`
}

type embeddedPtr struct {
	P string `json:"p"`
}

type unexportedEmbedded struct {
	X int `json:"x"`
}

type ConflictA struct {
	Dup    string `json:"dup"`
	Shared string
	Won    string `json:"Won"`
}

type ConflictB struct {
	Dup    string `json:"dup"`
	Shared string
	Won    string // untagged: loses to the tagged ConflictA.Won
}

// conflicting returns a struct embedding both ConflictA and ConflictB: dup
// and Shared collide and disappear, the tagged Won wins. It is built by
// reflection because go vet rightly rejects such a type in source.
func conflicting() any {
	t := reflect.StructOf([]reflect.StructField{
		{Name: "ConflictA", Type: reflect.TypeFor[ConflictA](), Anonymous: true},
		{Name: "ConflictB", Type: reflect.TypeFor[ConflictB](), Anonymous: true},
		{Name: "Own", Type: reflect.TypeFor[string](), Tag: `json:"own"`},
	})
	v := reflect.New(t)
	v.Elem().Field(0).Set(reflect.ValueOf(ConflictA{Dup: "a", Shared: "a", Won: "a"}))
	v.Elem().Field(1).Set(reflect.ValueOf(ConflictB{Dup: "b", Shared: "b", Won: "b"}))
	v.Elem().Field(2).SetString("own")
	return v.Interface()
}

type deeper struct {
	inner
	Deep string `json:"deep"`
}

type zeroer struct{ N int }

func (z zeroer) IsZero() bool { return z.N == 42 }

type textKey struct{ a, b string }

func (k textKey) MarshalText() ([]byte, error) { return []byte(k.a + "/" + k.b), nil }

type textVal int

func (v textVal) MarshalText() ([]byte, error) { return []byte(fmt.Sprintf("#%d", int(v))), nil }

type ptrMarshaler struct {
	V string `json:"v"`
}

func (p *ptrMarshaler) MarshalJSON() ([]byte, error) {
	return []byte(`{"custom":` + fmt.Sprintf("%q", p.V) + `,"n":1.5,"i":2}`), nil
}

type valMarshaler struct{ v []int }

func (m valMarshaler) MarshalJSON() ([]byte, error) { return json.Marshal(m.v) }

type myString string

type tree struct {
	Name     string `json:"name"`
	Children []tree `json:"children,omitempty"`
	Next     *tree  `json:"next,omitempty"`
}

type tagRules struct {
	inlineMeta `json:",inline"`
	*embeddedPtr
	unexportedEmbedded
	deeper
	Named        inner  `json:"named"`
	Renamed      string `json:"renamed_field"`
	Untagged     string
	Skipped      string `json:"-"`
	Dash         string `json:"-,"` //nolint:staticcheck // SA5008: the tag is odd on purpose: encoding/json's reading of it is under test
	private      string
	BadTag       string            `json:"bad\\name"` //nolint:staticcheck // SA5008: the tag is odd on purpose: encoding/json's reading of it is under test
	OmitStr      string            `json:",omitempty"`
	OmitPtr      *int              `json:"omitPtr,omitempty"`
	NilPtr       *int              `json:"nilPtr"`
	PtrPtr       **string          `json:"ptrPtr"`
	NilSlice     []string          `json:"nilSlice"`
	NilSliceOmit []string          `json:"nilSliceOmit,omitempty"`
	EmptySlice   []string          `json:"emptySlice"`
	EmptyOmit    []string          `json:"emptyOmit,omitempty"`
	NilMap       map[string]int    `json:"nilMap"`
	EmptyMapOmit map[string]int    `json:"emptyMapOmit,omitempty"`
	ZeroOmit     inner             `json:"zeroOmit,omitempty"`
	ZeroOmitZero inner             `json:"zeroOmitZero,omitzero"`
	SetOmitZero  inner             `json:"setOmitZero,omitzero"`
	TimeOmitZero metav1.Time       `json:"timeOmitZero,omitzero"`
	TimeOmitEmpt metav1.Time       `json:"timeOmitEmpty,omitempty"`
	TimePtrZero  *metav1.Time      `json:"timePtrZero,omitzero"`
	IsZero42     zeroer            `json:"isZero42,omitzero"`
	IsZero7      zeroer            `json:"isZero7,omitzero"`
	ZeroIface    any               `json:"zeroIface,omitzero"`
	Bytes        []byte            `json:"bytes"`
	NilBytes     []byte            `json:"nilBytes"`
	ByteArray    [3]byte           `json:"byteArray"`
	Quoted       int64             `json:"quoted,string"`
	QuotedPtr    *bool             `json:"quotedPtr,string"`
	QuotedNil    *int              `json:"quotedNil,string"`
	QuotedStr    string            `json:"quotedStr,string"`
	QuotedFloat  float64           `json:"quotedFloat,string"`
	QuotedStruct inner             `json:"quotedStruct,string"` //nolint:staticcheck // SA5008: the tag is odd on purpose: encoding/json's reading of it is under test
	F32          float32           `json:"f32"`
	F32Int       float32           `json:"f32Int"`
	F64          float64           `json:"f64"`
	F64Int       float64           `json:"f64Int"`
	F64Big       float64           `json:"f64Big"`
	F64Huge      float64           `json:"f64Huge"`
	F64Tiny      float64           `json:"f64Tiny"`
	F64Neg0      float64           `json:"f64Neg0"`
	F64Edge      float64           `json:"f64Edge"`
	F64Exact     float64           `json:"f64Exact"`
	F64Padded    float64           `json:"f64Padded"`
	F32Big       float32           `json:"f32Big"`
	F32Odd       float32           `json:"f32Odd"`
	U64Big       uint64            `json:"u64Big"`
	U64          uint64            `json:"u64"`
	U8           uint8             `json:"u8"`
	I8           int8              `json:"i8"`
	Any          any               `json:"any"`
	AnyNil       any               `json:"anyNil"`
	AnyNilOmit   any               `json:"anyNilOmit,omitempty"`
	AnyStruct    any               `json:"anyStruct"`
	AnyPtr       any               `json:"anyPtr"`
	Stringer     fmt.Stringer      `json:"stringer"`
	Invalid      string            `json:"invalid"`
	InvalidKeys  map[string]int    `json:"invalidKeys"`
	IntKeys      map[int]string    `json:"intKeys"`
	UintKeys     map[uint16]string `json:"uintKeys"`
	TextKeys     map[textKey]int   `json:"textKeys"`
	NamedKeys    map[myString]bool `json:"namedKeys"`
	TextVal      textVal           `json:"textVal"`
	TextValPtr   *textVal          `json:"textValPtr"`
	PtrMarshaler ptrMarshaler      `json:"ptrMarshaler"`
	PtrInMap     map[string]ptrMarshaler
	PtrInSlice   []ptrMarshaler
	PtrInArray   [1]ptrMarshaler
	ValMarshaler valMarshaler          `json:"valMarshaler"`
	NilMarshaler *valMarshaler         `json:"nilMarshaler"`
	Duration     metav1.Duration       `json:"duration"`
	Raw          runtime.RawExtension  `json:"raw"`
	NullRaw      runtime.RawExtension  `json:"nullRaw"`
	Nested       [][]int               `json:"nested"`
	Arr          [2]inner              `json:"arr"`
	NamedString  myString              `json:"namedString"`
	Tree         tree                  `json:"tree"`
	GoTime       time.Time             `json:"goTime"`
	MapOfSlices  map[string][]inner    `json:"mapOfSlices"`
	MapOfAny     map[string]any        `json:"mapOfAny"`
	HTML         string                `json:"html"`
	Unicode      string                `json:"unicode"`
	StructPtrs   []*inner              `json:"structPtrs"`
	Embedded     struct{ inner }       `json:"embedded"`
	Anonymous    struct{ X, Y string } `json:"anonymous"`
}

func populatedTagRules() *tagRules {
	s := "pp"
	sp := &s
	return &tagRules{
		inlineMeta:         inlineMeta{Kind: "Thing"},
		unexportedEmbedded: unexportedEmbedded{X: 7},
		deeper:             deeper{inner: inner{A: "deep-a", B: 3}, Deep: "d"},
		Named:              inner{A: "n"},
		Renamed:            "r",
		Untagged:           "u",
		Skipped:            "s",
		Dash:               "dash",
		private:            "p",
		BadTag:             "bad",
		PtrPtr:             &sp,
		EmptySlice:         []string{},
		EmptyOmit:          []string{},
		EmptyMapOmit:       map[string]int{},
		SetOmitZero:        inner{B: 1},
		TimeOmitEmpt:       metav1.Time{},
		TimePtrZero:        &metav1.Time{},
		IsZero42:           zeroer{N: 42},
		IsZero7:            zeroer{N: 7},
		ZeroIface:          zeroer{N: 42},
		Bytes:              []byte("hello, world"),
		ByteArray:          [3]byte{1, 2, 3},
		Quoted:             -12,
		QuotedPtr:          ptr(true),
		QuotedStr:          `a<b "c"`,
		QuotedFloat:        2.5e-7,
		QuotedStruct:       inner{A: "q"},
		F32:                0.1,
		F32Int:             3,
		F64:                0.1,
		F64Int:             -4,
		F64Big:             1e20,
		F64Huge:            1e300,
		F64Tiny:            1e-9,
		F64Neg0:            math.Copysign(0, -1),
		F64Edge:            -(1 << 63),
		F64Exact:           1<<53 + 2,
		F64Padded:          123456789012345678,
		F32Big:             1 << 30,
		F32Odd:             16777218,
		U64Big:             math.MaxUint64,
		U64:                1 << 40,
		U8:                 255,
		I8:                 -128,
		Any:                []any{1, "x", 2.5, nil, map[string]any{"k": float32(1.5)}},
		AnyStruct:          inner{A: "any"},
		AnyPtr:             &inner{A: "ptr"},
		Stringer:           time.Second,
		Invalid:            "a\xffb\xc0",
		InvalidKeys:        map[string]int{"k\xff": 1, "ok": 2},
		IntKeys:            map[int]string{-1: "minus", 10: "ten"},
		UintKeys:           map[uint16]string{8: "eight"},
		TextKeys:           map[textKey]int{{"a", "b"}: 1, {"c", "d"}: 2},
		NamedKeys:          map[myString]bool{"yes": true},
		TextVal:            5,
		TextValPtr:         ptr(textVal(6)),
		PtrMarshaler:       ptrMarshaler{V: "addressable"},
		PtrInMap:           map[string]ptrMarshaler{"m": {V: "not addressable"}},
		PtrInSlice:         []ptrMarshaler{{V: "slice element"}},
		PtrInArray:         [1]ptrMarshaler{{V: "array element"}},
		ValMarshaler:       valMarshaler{v: []int{1, 2}},
		Duration:           metav1.Duration{Duration: 90 * time.Second},
		Raw:                runtime.RawExtension{Raw: []byte(`{"x": [1, 1.0, 1e2, -0, 12345678901234567890]}`)},
		Nested:             [][]int{{1}, nil, {}},
		Arr:                [2]inner{{A: "0"}, {A: "1", B: 1}},
		NamedString:        "named",
		Tree:               tree{Name: "root", Children: []tree{{Name: "c1"}, {Name: "c2", Next: &tree{Name: "n"}}}},
		GoTime:             time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("X", -7200)),
		MapOfSlices:        map[string][]inner{"s": {{A: "x"}}, "nil": nil},
		MapOfAny:           map[string]any{"f": 1.0, "g": 1.5, "m": map[string]any{}},
		HTML:               "<a href=\"x\">&</a>",
		Unicode:            "zürich \u2028 日本",
		StructPtrs:         []*inner{{A: "1"}, nil},
		Embedded:           struct{ inner }{inner{A: "e"}},
		Anonymous:          struct{ X, Y string }{"x", "y"},
	}
}

// TestToNativeMatchesJSON is the property that defines the package: the view,
// fully materialised, is the JSON round trip of the object.
// omitEmpties has an omitempty member of each kind whose emptiness get
// reads from memory.
type omitEmpties struct {
	B    bool              `json:"b,omitempty"`
	I    int               `json:"i,omitempty"`
	I8   int8              `json:"i8,omitempty"`
	I16  int16             `json:"i16,omitempty"`
	I32  int32             `json:"i32,omitempty"`
	I64  int64             `json:"i64,omitempty"`
	U    uint              `json:"u,omitempty"`
	U8   uint8             `json:"u8,omitempty"`
	U16  uint16            `json:"u16,omitempty"`
	U32  uint32            `json:"u32,omitempty"`
	U64  uint64            `json:"u64,omitempty"`
	F32  float32           `json:"f32,omitempty"`
	F64  float64           `json:"f64,omitempty"`
	S    string            `json:"s,omitempty"`
	L    []int             `json:"l,omitempty"`
	M    map[string]string `json:"m,omitempty"`
	P    *string           `json:"p,omitempty"`
	PB   *bool             `json:"pb,omitempty"`
	Bits [2]byte           `json:"bits,omitempty"`
}

// setOmitEmpties returns an omitEmpties with every member set, and one
// whose floats are -0 (empty, as 0) and whose list and map are empty but
// not nil (empty too).
func setOmitEmpties() (set, zeroes *omitEmpties) {
	empty, no := "", false
	set = &omitEmpties{B: true, I: -1, I8: -8, I16: -16, I32: -32, I64: -64, U: 1, U8: 8, U16: 16, U32: 32, U64: 64,
		F32: 0.5, F64: -2.5, S: "s", L: []int{1}, M: map[string]string{"k": "v"}, P: &empty, PB: &no, Bits: [2]byte{1, 2}}
	zeroes = &omitEmpties{F32: float32(math.Copysign(0, -1)), F64: math.Copysign(0, -1), L: []int{}, M: map[string]string{}}
	return set, zeroes
}

func TestToNativeMatchesJSON(t *testing.T) {
	set, zeroes := setOmitEmpties()
	cases := []struct {
		name string
		obj  any
	}{
		{"omitempty members set", set},
		{"omitempty members set, by value", *set},
		{"omitempty members empty", &omitEmpties{}},
		{"omitempty members -0 and empty", zeroes},
		{"omitempty members -0 and empty, by value", *zeroes},
		{"omitempty members in a list", []omitEmpties{*set, {}, *zeroes}},
		{"omitempty members in a map", map[string]omitEmpties{"set": *set, "zero": {}}},
		{"tag rules", populatedTagRules()},
		{"tag rules by value", *populatedTagRules()},
		{"zero tag rules", &tagRules{}},
		{"conflicting embedded fields", conflicting()},
		{"tree", &tree{Name: "a", Next: &tree{Name: "b", Children: []tree{}}}},
		{"slice root", []inner{{A: "x"}}},
		{"map root", map[string]inner{"k": {A: "v"}}},
		{"string root", "s"},
		{"int root", 3},
		{"nil pointer root", (*inner)(nil)},
	}
	for _, fx := range fixtures() {
		cases = append(cases, struct {
			name string
			obj  any
		}{fx.name, fx.obj})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ToNative(New(tc.obj))
			if err != nil {
				t.Fatal(err)
			}
			want := unstructuredOf(t, tc.obj)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ToNative differs from the JSON round trip:\n%s", diff(got, want))
			}
		})
	}
}

// TestTagRules spells out a few rules that the property above checks
// wholesale.
func TestTagRules(t *testing.T) {
	tests := []struct {
		name string
		obj  any
		want map[string]any
	}{
		{"colliding embedded fields", conflicting(), map[string]any{"Won": "a", "own": "own"}},
		{"inline TypeMeta", &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{Kind: "Pod"}},
			map[string]any{"kind": "Pod", "metadata": map[string]any{}}},
		{"nil embedded pointer", &struct {
			*embeddedPtr
			Q string `json:"q"`
		}{Q: "q"}, map[string]any{"q": "q"}},
		{"set embedded pointer", &struct{ *embeddedPtr }{&embeddedPtr{P: "p"}}, map[string]any{"p": "p"}},
		{"omitempty and omitzero", &struct {
			A []int       `json:"a,omitempty"`
			B []int       `json:"b"`
			C inner       `json:"c,omitempty"`
			D inner       `json:"d,omitzero"`
			E metav1.Time `json:"e,omitempty"`
			F metav1.Time `json:"f,omitzero"`
			G *int        `json:"g"`
		}{A: []int{}}, map[string]any{"b": nil, "c": map[string]any{"a": ""}, "e": nil, "g": nil}},
		{"quoted scalars", &struct {
			I int64   `json:"i,string"`
			S string  `json:"s,string"`
			F float64 `json:"f,string"`
		}{I: 1, S: "<", F: 1e-7}, map[string]any{"i": "1", "s": `"\u003c"`, "f": "1e-7"}},
		{"integral floats", &struct {
			A float64 `json:"a"`
			B float64 `json:"b"`
			C float32 `json:"c"`
		}{A: 2, B: 1e21, C: 0.1}, map[string]any{"a": int64(2), "b": 1e21, "c": 0.1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ToNative(New(tc.obj))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, any(tc.want)) {
				t.Errorf("got %#v\nwant %#v", got, tc.want)
			}
			if rt := unstructuredOf(t, tc.obj); !reflect.DeepEqual(rt, any(tc.want)) {
				t.Errorf("the expectation is not the JSON round trip %#v", rt)
			}
		})
	}
}

// diff describes where two JSON-like values differ.
func diff(got, want any) string {
	var b strings.Builder
	var walk func(path string, g, w any)
	walk = func(path string, g, w any) {
		gm, gok := g.(map[string]any)
		wm, wok := w.(map[string]any)
		if gok && wok {
			for k := range gm {
				if _, ok := wm[k]; !ok {
					fmt.Fprintf(&b, "  %s.%s: unexpected %#v\n", path, k, gm[k])
				}
			}
			for k := range wm {
				if _, ok := gm[k]; !ok {
					fmt.Fprintf(&b, "  %s.%s: missing, want %#v\n", path, k, wm[k])
					continue
				}
				walk(path+"."+k, gm[k], wm[k])
			}
			return
		}
		gl, gok := g.([]any)
		wl, wok := w.([]any)
		if gok && wok && len(gl) == len(wl) {
			for i := range gl {
				walk(fmt.Sprintf("%s[%d]", path, i), gl[i], wl[i])
			}
			return
		}
		if !reflect.DeepEqual(g, w) {
			fmt.Fprintf(&b, "  %s: got %#v, want %#v\n", path, g, w)
		}
	}
	walk("", got, want)
	return b.String()
}

type unsupported struct {
	OK   string          `json:"ok"`
	Ch   chan int        `json:"ch"`
	Fn   func()          `json:"fn"`
	C    complex128      `json:"c"`
	NaN  float64         `json:"nan"`
	Inf  float32         `json:"inf"`
	Keys map[bool]int    `json:"keys"`
	Bad  badMarshaler    `json:"bad"`
	Junk junkMarshaler   `json:"junk"`
	Text badText         `json:"text"`
	TKey map[badText]int `json:"tkey"`
}

type badMarshaler struct{}

func (badMarshaler) MarshalJSON() ([]byte, error) { return nil, errors.New("boom") }

type junkMarshaler struct{}

func (junkMarshaler) MarshalJSON() ([]byte, error) { return []byte("{not json"), nil }

type badText struct{ s string }

func (t badText) MarshalText() ([]byte, error) {
	if t.s == "" {
		return nil, errors.New("empty text")
	}
	return []byte(t.s), nil
}

// TestUnsupported checks that what json.Marshal rejects becomes a CEL error
// where it is read, and only there.
func TestUnsupported(t *testing.T) {
	obj := &unsupported{
		OK:   "fine",
		Ch:   make(chan int),
		Fn:   func() {},
		C:    1i,
		NaN:  math.NaN(),
		Inf:  float32(math.Inf(1)),
		Keys: map[bool]int{true: 1},
		TKey: map[badText]int{{}: 1},
	}
	env := celEnv(t)
	if got := evaluate(program(t, env, `object.ok`), New(obj)); got.Value != "fine" {
		t.Errorf("object.ok = %+v, want fine", got)
	}
	for _, member := range []string{"ch", "fn", "c", "nan", "inf", "keys", "bad", "junk", "text"} {
		got := evaluate(program(t, env, `object.`+member), New(obj))
		if got.Err == "" {
			t.Errorf("object.%s = %+v, want an error", member, got)
		}
		got = evaluate(program(t, env, `has(object.`+member+`)`), New(obj))
		if got.Err == "" {
			t.Errorf("has(object.%s) = %+v, want an error", member, got)
		}
	}
	if got := evaluate(program(t, env, `object.tkey.exists(k, k == 'x')`), New(obj)); got.Err == "" {
		t.Errorf("iterating keys whose MarshalText fails = %+v, want an error", got)
	}
	if _, err := ToNative(New(obj)); err == nil {
		t.Error("ToNative succeeded, want an error")
	}
}

type cycle struct {
	Name string `json:"name"`
	Next *cycle `json:"next"`
}

// TestCycle checks that a cyclic value, which json.Marshal rejects, can be
// read lazily and fails to materialise instead of recursing forever.
func TestCycle(t *testing.T) {
	c := &cycle{Name: "c"}
	c.Next = c
	if got := evaluate(program(t, celEnv(t), `object.next.next.next.name`), New(c)); got.Value != "c" {
		t.Errorf("object.next.next.next.name = %+v", got)
	}
	if _, err := ToNative(New(c)); err == nil || err.Error() != "exceeded max depth of 10000" {
		t.Errorf("ToNative() error = %v", err)
	}
}
