package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/goccy/go-yaml"
)

// table writes aligned columns, as kubectl get does.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		if c == "" {
			cells[i] = "-"
		}
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *table) flush() { _ = t.tw.Flush() }

// printRaw prints an API result as indented JSON or as YAML.
func printRaw(w io.Writer, raw json.RawMessage, format string) error {
	if format == "yaml" {
		b, err := yaml.JSONToYAML(raw)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err := buf.WriteTo(w)
	return err
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func itoa[T ~int | ~int64 | ~uint32](n T) string { return strconv.FormatInt(int64(n), 10) }
