/* A well-formed shared library that is not an nnc module: it exports no
 * descriptor symbol. */
int not_an_nnc_module(void) { return 42; }
