// Package watch prints the changes of the objects of some resources as they
// happen, one line or one JSON object per event (kubectl informer watch): a
// [Request] is compiled by [Compile] into a [Watcher], whose [Watcher.Run]
// fills the caches with package plan (whole objects, handlers registered
// before the first list is in) and turns every handler call into an
// [Event]: ADDED, UPDATED (with the fields that changed, see [Diff]),
// DELETED, ENTERED and LEFT for objects that start or stop matching
// --where or the selectors, RESYNC, and relist summaries.
//
// It is built on package plan and the engine (package query); nothing in
// pkg imports it, and it must not import query/interactive or queryserver.
package watch
