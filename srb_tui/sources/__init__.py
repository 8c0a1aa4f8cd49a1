"""srb_tui.sources"""
