int main() { return 0; }  // TODO(foundation): the gemflow command
