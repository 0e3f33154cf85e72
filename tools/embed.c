/* embed: write a file as a C array, so the prelude ships inside the binary.
   usage: embed SYMBOL FILE > out.c  (defines SYMBOL_text and SYMBOL_len) */
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: embed SYMBOL FILE\n");
    return 2;
  }
  FILE *f = fopen(argv[2], "rb");
  if (!f) {
    perror(argv[2]);
    return 1;
  }
  printf("#include <stddef.h>\nconst char %s_text[] = {", argv[1]);
  size_t n = 0;
  int ch;
  while ((ch = fgetc(f)) != EOF) {
    printf("%s%d,", n % 24 ? "" : "\n", ch);
    n++;
  }
  printf("0};\nconst size_t %s_len = %zu;\n", argv[1], n);
  fclose(f);
  return 0;
}
