// TODO(foundation): being implemented
