def huge := 1e400
