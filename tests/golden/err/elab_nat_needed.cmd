check @FILE --entry f
