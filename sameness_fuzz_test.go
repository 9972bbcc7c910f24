package paykit

import (
	"strings"
	"testing"
	"unicode"
)

// FuzzPhoneSameness: whatever two strings, samePhone never panics, is
// symmetric, says "different" only when both map to national numbers that
// differ and "same" whenever they map to the same one; its errors carry
// no digit of either number; and a number that maps is the same as its
// +7 and 8 forms.
func FuzzPhoneSameness(f *testing.F) {
	for _, s := range [][2]string{
		{"+7 912 345-67-89", "89123456789"}, {"9123456789", "79123456780"}, {"+89123456789", "89123456789"},
		{"+9123456789", "9123456789"}, {"+7 912 ***-**-89", "79123456789"}, {"8-10-7-912-345-67-89", ""},
		{" +7\u00a0(912)\u2011345", "7 912 345"}, {"+375 29 123-45-67", "+375291234568"}, {"0123456789", "70123456789"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		v, err := samePhone("phone", a, b)
		if w, _ := samePhone("phone", b, a); w != v {
			t.Fatalf("not symmetric: %d one way, %d the other", v, w)
		}
		na, aok := ruPhone(a)
		nb, bok := ruPhone(b)
		switch {
		case v == different && !(aok && bok && na != nb):
			t.Fatal("different, but not two numbers that map to other national digits")
		case aok && bok && na == nb && v != same:
			t.Fatalf("%d for two forms of one number", v)
		}
		if err != nil && strings.ContainsFunc(err.Error(), unicode.IsDigit) {
			t.Fatal("a digit in the error") // not the text: it may be a number
		}
		if aok {
			for _, form := range []string{"+7" + na, "8" + na, "7" + na, na, "+7 (" + na[:3] + ") " + na[3:6] + "-" + na[6:]} {
				if v, _ := samePhone("phone", a, form); v != same {
					t.Fatalf("%d against its own form %d", v, len(form))
				}
			}
		}
	})
}

// FuzzNameSameness: whatever two names, sameName never panics, is
// symmetric, says "different" only for names it can decide (nameKey ok,
// one alphabet); a name is the same as itself with its Й and Ё decomposed,
// its ё written е and its spacing changed.
func FuzzNameSameness(f *testing.F) {
	for _, s := range [][2]string{
		{"Пётр Йорданов", "ПЕТР ЙОРДАНОВ"}, {"Пе\u0308тр И\u0306орданов", "Пётр Йорданов"}, {"José", "Jose\u0301"},
		{"Ivan Ivanov", "Иван Иванов"}, {"Ivan\u00adov", "Ivanov"}, {"\u0306И", "Й"}, {"Ё\u0308", "Ё"}, {"", " "},
	} {
		f.Add(s[0], s[1])
	}
	decompose := strings.NewReplacer("Й", "И\u0306", "й", "и\u0306", "Ё", "Е\u0308", "ё", "е")
	f.Fuzz(func(t *testing.T, a, b string) {
		v, _ := sameName("name", a, b)
		if w, _ := sameName("name", b, a); w != v {
			t.Fatalf("not symmetric: %d one way, %d the other", v, w)
		}
		ka, aok := nameKey(a)
		kb, bok := nameKey(b)
		if v == different && !(aok && bok && script(ka) == script(kb)) {
			t.Fatal("different, but not two names it can decide")
		}
		if strings.TrimSpace(a) == "" {
			return
		}
		for _, form := range []string{decompose.Replace(a), " " + strings.Join(strings.Fields(a), "  ") + "\t"} {
			if v, _ := sameName("name", a, form); v != same {
				t.Fatalf("%d against a form of itself", v)
			}
		}
	})
}
