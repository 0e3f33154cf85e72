graph --help
