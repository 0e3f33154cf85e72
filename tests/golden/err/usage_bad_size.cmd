check @FILE --size N=abc
