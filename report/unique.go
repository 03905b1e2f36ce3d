package report

// Unique wraps w so that it receives one record per distinct link: the
// first occurrence, with Count set to the number of occurrences. Links are
// told apart by their canonical form, or as written when they have none.
// The records are written, in order of first occurrence, at Close; memory
// grows with the number of distinct links.
func Unique(w Writer) Writer {
	return &uniqueWriter{w: w, index: map[string]int{}}
}

type uniqueWriter struct {
	w     Writer
	index map[string]int
	recs  []Record
}

func (u *uniqueWriter) Message(parts int, damaged bool) { u.w.Message(parts, damaged) }

func (u *uniqueWriter) Write(r *Record) error {
	key := r.Canonical
	if key == "" {
		key = "\x00" + r.URL
	}
	if i, ok := u.index[key]; ok {
		u.recs[i].Count++
		return nil
	}
	u.index[key] = len(u.recs)
	rec := *r
	rec.Count = 1
	u.recs = append(u.recs, rec)
	return nil
}

func (u *uniqueWriter) Close() error {
	for i := range u.recs {
		if err := u.w.Write(&u.recs[i]); err != nil {
			return err
		}
	}
	return u.w.Close()
}
