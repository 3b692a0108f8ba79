package framework

import (
	"regexp"
	"slices"
	"strings"
)

// AgelessTable returns the cells of the tables in out, with the cells of AGE
// columns replaced by "<age>", and those cells: an age is computed from
// the clock when each command prints, and two commands run at different
// times. Tables are separated by blank lines, each starting with its
// header, whose names (words joined by single blanks) start the columns:
// a cell runs from its column's start to the next one's, so cells may be
// empty or hold blanks ("3 (11y ago)"). With --no-headers, noHeaders is
// the AGE column's position (0-based) and cells are split at blanks;
// else it is -1.
func AgelessTable(out string, noHeaders int) (rows [][]string, ages []string) {
	age := noHeaders
	header := noHeaders < 0
	var starts []int
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		cells := strings.Fields(l)
		isHeader := false
		switch {
		case len(cells) == 0:
			header, starts = noHeaders < 0, nil
		case header:
			starts = nil
			for _, m := range headerName.FindAllStringIndex(l, -1) {
				starts = append(starts, m[0])
			}
			cells = columnCells(l, starts)
			age = slices.Index(cells, "AGE")
			header, isHeader = false, true
		case starts != nil:
			cells = columnCells(l, starts)
		}
		if !isHeader && age >= 0 && age < len(cells) {
			ages = append(ages, cells[age])
			cells[age] = "<age>"
		}
		rows = append(rows, cells)
	}
	return rows, ages
}

// headerName is a column's name in a table header.
var headerName = regexp.MustCompile(`\S+( \S+)*`)

// columnCells splits a table line into the cells of the columns starting
// at starts.
func columnCells(l string, starts []int) []string {
	cells := make([]string, len(starts))
	for i, s := range starts {
		end := len(l)
		if i+1 < len(starts) {
			end = min(starts[i+1], len(l))
		}
		if s < end {
			cells[i] = strings.TrimSpace(l[s:end])
		}
	}
	return cells
}
