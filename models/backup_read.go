package models

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// backupReader reads a backup line by line, hashing what it reads up to
// the trailer.
type backupReader struct {
	zr   *gzip.Reader
	br   *bufio.Reader
	sum  hash.Hash
	line []byte
}

// maxBackupLine bounds a line, so that a foreign file cannot make a reader
// hold it all in memory.
const maxBackupLine = 64 << 20

func newBackupReader(r io.Reader) (*backupReader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(2)
	if err != nil || magic[0] != 0x1f || magic[1] != 0x8b {
		return nil, badBackup("the file is not gzip-compressed")
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, badBackup("the file is not gzip-compressed (%v)", err)
	}
	return &backupReader{zr: zr, br: bufio.NewReaderSize(zr, 256<<10), sum: sha256.New()}, nil
}

// next reads the next line, without its newline. A file that ends before
// its trailer, or whose compression is damaged, is a bad backup.
func (r *backupReader) next() ([]byte, error) {
	r.line = r.line[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.line = append(r.line, chunk...)
		if len(r.line) > maxBackupLine {
			return nil, badBackup("a line longer than %d MiB", maxBackupLine>>20)
		}
		if err == nil {
			return r.line[:len(r.line)-1], nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, badBackup("the file is truncated (it ends before its trailer)")
		}
		if errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) {
			return nil, badBackup("the file is damaged (%v)", err)
		}
		return nil, badBackup("the file cannot be read (%v)", err)
	}
}

// backupVisitor receives a backup's content as it is read: the header,
// each table's columns, each row's raw values.
type backupVisitor struct {
	header func(BackupHeader) error
	table  func(t backupTable) error
	row    func(vals []any) error
	// done is called after each table's last row.
	done func(name string) error
}

// readBackup reads a whole backup from r, checking its format, each row
// against its table's columns, and the trailer's counts and checksum at
// the end; v's functions (each may be nil) receive the content. An error
// wrapping ErrBadBackup means the file is not whole or not a backup.
func readBackup(r io.Reader, v backupVisitor) (BackupSummary, error) {
	br, err := newBackupReader(r)
	if err != nil {
		return BackupSummary{}, err
	}
	line, err := br.next()
	if err != nil {
		return BackupSummary{}, err
	}
	var h BackupHeader
	if json.Unmarshal(line, &h) != nil || h.Format != BackupFormat {
		return BackupSummary{}, badBackup("the file is not a petstore backup (no petstore-backup header)")
	}
	if h.Version > BackupFormatVersion || h.Version < 1 {
		return BackupSummary{}, badBackup("the backup's format version is %d; this petstore reads version %d: use a petstore at least as new as the one that wrote it (%s)",
			h.Version, BackupFormatVersion, h.Petstore)
	}
	br.sum.Write(line)
	br.sum.Write([]byte{'\n'})
	if v.header != nil {
		if err := v.header(h); err != nil {
			return BackupSummary{}, err
		}
	}
	res := BackupSummary{Header: h}
	var cols []backupColumn
	var current string
	var count int64
	seen := map[string]bool{}
	endTable := func() error {
		if current == "" {
			return nil
		}
		res.Tables = append(res.Tables, BackupTable{Name: current, Rows: count})
		if v.done != nil {
			return v.done(current)
		}
		return nil
	}
	var raw []json.RawMessage
	var vals []any
	lineNo := 1
	for {
		line, err := br.next()
		if err != nil {
			return BackupSummary{}, err
		}
		lineNo++
		if len(line) > 0 && line[0] == '[' {
			if current == "" {
				return BackupSummary{}, badBackup("line %d: a row before any table", lineNo)
			}
			var ok bool
			if raw, ok = splitRow(line, raw[:0]); !ok || len(raw) != len(cols) {
				return BackupSummary{}, badBackup("line %d: a damaged row of %s", lineNo, current)
			}
			vals = vals[:0]
			for i, c := range cols {
				x, err := decodeValue(c.Kind, raw[i])
				if err != nil {
					return BackupSummary{}, badBackup("line %d: a damaged value of %s.%s", lineNo, current, c.Name)
				}
				vals = append(vals, x)
			}
			br.sum.Write(line)
			br.sum.Write([]byte{'\n'})
			count++
			if v.row != nil {
				if err := v.row(vals); err != nil {
					return BackupSummary{}, err
				}
			}
			continue
		}
		var obj struct {
			backupTable
			Trailer *json.RawMessage `json:"trailer"`
		}
		if err := json.Unmarshal(line, &obj); err != nil {
			return BackupSummary{}, badBackup("line %d is damaged", lineNo)
		}
		if obj.Trailer != nil {
			if err := endTable(); err != nil {
				return BackupSummary{}, err
			}
			var t backupTrailer
			if err := json.Unmarshal(line, &t); err != nil {
				return BackupSummary{}, badBackup("the trailer is damaged")
			}
			if got := hex.EncodeToString(br.sum.Sum(nil)); got != t.Trailer.SHA256 {
				return BackupSummary{}, badBackup("the checksum does not match the contents (the file was changed or damaged)")
			}
			if len(t.Trailer.Rows) != len(res.Tables) {
				return BackupSummary{}, badBackup("the trailer counts %d tables, the file holds %d", len(t.Trailer.Rows), len(res.Tables))
			}
			for _, tb := range res.Tables {
				if want, ok := t.Trailer.Rows[tb.Name]; !ok || want != tb.Rows {
					return BackupSummary{}, badBackup("table %s holds %d rows, the trailer counts %d", tb.Name, tb.Rows, want)
				}
			}
			// Nothing may follow the trailer but the end of the stream.
			if _, err := br.br.ReadByte(); !errors.Is(err, io.EOF) {
				if err == nil {
					return BackupSummary{}, badBackup("data after the trailer")
				}
				return BackupSummary{}, badBackup("the file is damaged after its trailer (%v)", err)
			}
			return res, nil
		}
		if !identifier.MatchString(obj.Table) || len(obj.Columns) == 0 || seen[obj.Table] {
			return BackupSummary{}, badBackup("line %d is damaged (a bad table line)", lineNo)
		}
		for _, c := range obj.Columns {
			if !identifier.MatchString(c.Name) || !slices.Contains([]string{kindInt, kindFloat, kindText, kindBytes, kindTime}, c.Kind) {
				return BackupSummary{}, badBackup("line %d is damaged (a bad column of %s)", lineNo, obj.Table)
			}
		}
		if err := endTable(); err != nil {
			return BackupSummary{}, err
		}
		br.sum.Write(line)
		br.sum.Write([]byte{'\n'})
		if obj.NextID < 0 {
			return BackupSummary{}, badBackup("line %d is damaged (a bad counter of %s)", lineNo, obj.Table)
		}
		current, cols, count = obj.Table, obj.Columns, 0
		seen[current] = true
		if v.table != nil {
			if err := v.table(obj.backupTable); err != nil {
				return BackupSummary{}, err
			}
		}
	}
}

// splitRow splits a row's line, a JSON array, into its values' raw text,
// appended to out. It checks only the array's shape; decodeValue checks
// each value strictly against its column's kind.
func splitRow(line []byte, out []json.RawMessage) ([]json.RawMessage, bool) {
	if len(line) < 2 || line[0] != '[' || line[len(line)-1] != ']' {
		return nil, false
	}
	body := line[1 : len(line)-1]
	if len(body) == 0 {
		return out, true
	}
	start, depth, inString := 0, 0, false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth < 0 {
				return nil, false
			}
		case ',':
			if depth == 0 {
				out = append(out, body[start:i])
				start = i + 1
			}
		}
	}
	if inString || depth != 0 {
		return nil, false
	}
	return append(out, body[start:]), true
}

// decodeValue turns a raw JSON value of kind into what the driver writes.
func decodeValue(kind string, raw json.RawMessage) (any, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	switch kind {
	case kindInt:
		return strconv.ParseInt(string(raw), 10, 64)
	case kindFloat:
		return strconv.ParseFloat(string(raw), 64)
	case kindTime:
		s, err := jsonString(raw)
		if err != nil {
			return nil, err
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		return t.UTC(), err
	case kindBytes:
		s, err := jsonString(raw)
		if err != nil {
			return nil, err
		}
		return base64.StdEncoding.DecodeString(s)
	case kindText:
		if len(raw) > 0 && raw[0] == '{' {
			var b struct {
				B []byte `json:"b"`
			}
			if err := json.Unmarshal(raw, &b); err != nil {
				return nil, err
			}
			return string(b.B), nil
		}
		return jsonString(raw)
	}
	return nil, fmt.Errorf("unknown kind %q", kind)
}

// jsonString decodes a JSON string. Most hold no escape, and are their
// bytes between the quotes: those skip encoding/json, which a restore
// would otherwise spend much of its time in.
func jsonString(raw json.RawMessage) (string, error) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		plain := true
		for _, c := range raw[1 : n-1] {
			if c == '\\' || c == '"' || c < 0x20 {
				plain = false
				break
			}
		}
		if plain && utf8.Valid(raw[1:n-1]) {
			return string(raw[1 : n-1]), nil
		}
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// CheckBackup reads a whole backup from r and verifies it without writing
// anything: the format, every row, the counts and the checksum. It does
// not compare the schema version with a database's: Restore does.
func CheckBackup(r io.Reader) (BackupSummary, error) {
	return readBackup(r, backupVisitor{})
}
