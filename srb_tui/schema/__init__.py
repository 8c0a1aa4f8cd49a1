"""srb_tui.schema"""
