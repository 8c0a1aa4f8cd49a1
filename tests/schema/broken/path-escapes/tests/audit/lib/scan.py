# shared scan helpers
