package ledger

import "context"

// PutBlobs stores contents as blobs with durability d and returns their
// hashes. With Async they are queued in order with entries, so an entry
// appended with Sync afterwards finds them durable; a snapshot of many
// files stores its content this way rather than holding it all in one
// record. Prefer Record.Blobs for a few blobs that belong to one entry.
func (l *Ledger) PutBlobs(ctx context.Context, d Durability, contents ...[]byte) ([]Hash, error) {
	if l.readOnly {
		return nil, ErrReadOnly
	}
	pbs := make([]preparedBlob, len(contents))
	hs := make([]Hash, len(contents))
	for i, c := range contents {
		pbs[i] = prepareBlob(c)
		hs[i] = pbs[i].hash
	}
	if _, err := l.w.append(ctx, d, nil, nil, pbs); err != nil {
		return nil, err
	}
	return hs, nil
}
