/* gpu suite: stub until written */
int main(void) { return 77; }
