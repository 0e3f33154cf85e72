check @FILE --entry atention
