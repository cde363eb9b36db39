package budget

import (
	"sync"
	"testing"
)

// TestBytes: closing gives back the share once, however many times and from however many
// goroutines it is closed, and Move carries the accounting to another budget.
func TestBytes(t *testing.T) {
	uploads, retry := New(100), New(100)
	held, _ := uploads.TryTake(30)
	a, b := NewBytes(make([]byte, 10), held, 10), NewBytes(make([]byte, 20), held, 20)
	if a.Len() != 10 || uploads.InUse() != 30 {
		t.Fatalf("len %d, in use %d; want 10 and 30", a.Len(), uploads.InUse())
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { a.Close() })
	}
	wg.Wait()
	a.Close()
	if a.Bytes() != nil || uploads.InUse() != 20 || held.Held() != 20 {
		t.Fatalf("after closing one: bytes %v, in use %d, held %d; want nil, 20 and 20 (the other's)", a.Bytes() != nil, uploads.InUse(), held.Held())
	}

	// The retry memory takes b over: its upload share goes back at once, its bytes stay.
	kept, _ := retry.TryTake(20)
	b.Move(kept)
	if b.Len() != 20 || uploads.InUse() != 0 || retry.InUse() != 20 {
		t.Fatalf("after Move: len %d, uploads %d, retry %d; want 20, 0 and 20", b.Len(), uploads.InUse(), retry.InUse())
	}
	b.Close()
	b.Close()
	if retry.InUse() != 0 || uploads.InUse() != 0 {
		t.Fatalf("after Close: retry %d, uploads %d; want 0 and 0", retry.InUse(), uploads.InUse())
	}

	// A hold moved onto closed bytes is not kept: nobody would ever give it back.
	late, _ := retry.TryTake(5)
	b.Move(late)
	if retry.InUse() != 0 {
		t.Fatalf("a hold moved onto closed bytes is still held: %d", retry.InUse())
	}

	// Not counted anywhere, and nil: nothing to give back, nothing to panic about.
	free := NewBytes([]byte("x"), nil, 1)
	free.Close()
	var none *Bytes
	none.Close()
	late, _ = retry.TryTake(5)
	none.Move(late)
	if none.Bytes() != nil || none.Len() != 0 || retry.InUse() != 0 {
		t.Fatal("a nil Bytes holds something")
	}
}

// TestCarve: an upload's share moves to the pages carved from it, never more than it had; closing
// the upload gives back what no page took, and each page gives back its own when closed.
func TestCarve(t *testing.T) {
	uploads := New(100)
	held, _ := uploads.TryTake(30)
	up := NewBytes(make([]byte, 30), held, 30)
	p1 := up.Carve([]byte("page one"), 8)
	p2 := up.Carve(make([]byte, 40), 40) // larger than what is left: takes the 22 left
	p3 := up.Carve([]byte("x"), 1)       // nothing left: counts in nothing
	if up.Len() != 30 {
		t.Fatalf("the upload lost its bytes when carved: len %d", up.Len())
	}
	up.Close()
	if uploads.InUse() != 30 || held.Held() != 30 {
		t.Fatalf("after the upload closed: in use %d, held %d; want 30 and 30 (the pages')", uploads.InUse(), held.Held())
	}
	p3.Close()
	p1.Close()
	if uploads.InUse() != 22 {
		t.Fatalf("after page 1 closed: in use %d, want 22 (page 2's)", uploads.InUse())
	}
	p2.Close()
	if uploads.InUse() != 0 {
		t.Fatalf("after every page closed: in use %d", uploads.InUse())
	}

	// A share that no page takes is given back when the upload closes.
	held, _ = uploads.TryTake(10)
	up = NewBytes(make([]byte, 10), held, 10)
	small := up.Carve([]byte("abc"), 3)
	up.Close()
	if uploads.InUse() != 3 {
		t.Fatalf("a page of 3 from an upload of 10: in use %d after the upload closed, want 3", uploads.InUse())
	}
	small.Close()

	// Carved from closed or nil bytes: counted nowhere, nothing to give back.
	late := up.Carve([]byte("late"), 4)
	var none *Bytes
	if late.Len() != 4 || none.Carve([]byte("y"), 1).Len() != 1 {
		t.Fatal("carved bytes lost their data")
	}
	late.Close()
	if uploads.InUse() != 0 {
		t.Fatalf("in use %d at the end", uploads.InUse())
	}
}
