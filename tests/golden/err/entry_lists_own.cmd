check @FILE --entry zzz
