"""srb_tui.drivers"""
