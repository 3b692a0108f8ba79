package plan

import "runtime/debug"

// releaseMemory collects garbage and returns the memory it frees to the
// operating system. The commands that keep their caches (watch, query
// --watch, the interactive mode) call it once the caches are filled: the
// lists decoded to fill them are garbage by then, which the runtime would
// otherwise give back only gradually (query --watch at 10,000 pods: 89 MiB
// resident before, 78 MiB after).
func releaseMemory() { debug.FreeOSMemory() }
