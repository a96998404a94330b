"""guardian_proxy/session/keyed.py: the names a record gives by its keys (JSON, code and configs, pasted tables)."""

import json


def test_a_tool_outputs_json_names_its_people_by_their_keys():
    from guardian_proxy.session.keyed import keyed_names

    text = json.dumps({"customer": {"name": "Olga Ivanova", "first_name": "Oluwaseun", "email": "o@x.org"},
                       "items": [{"name": "Blue Widget"}, {"name": "Grace Hopper Poster"}], "assignee": "support-bot",
                       "subject": "Export to CSV fails"})
    assert [text[a:b] for a, b, _ in keyed_names(text)] == ["Olga Ivanova", "Oluwaseun"]
    assert keyed_names("not json: {\"name\": \"Olga Ivanova\"") == []


def test_a_pasted_tables_name_column_names_people():
    """A CSV pasted into a chat ("1042,Ingrid Halvorsen,ingrid.h@…") reached the model with every name: NER reads
    "1043,Mateus" as one token. The table's columns say what each cell is."""
    from guardian_proxy.session.keyed import table_cells, table_column, tabled_names

    text = ("Here's a sample of our customers.csv:\nid,name,email,city\n1042,Ingrid Halvorsen,ingrid.h@fjordmail.no,"
            "Bergen\n1043,Mateus Carvalho,mateus.c@uol.com.br,Recife\nWrite a pandas snippet.")
    assert [text[a:b] for a, b, _ in tabled_names(text)] == ["Ingrid Halvorsen", "Mateus Carvalho"]
    (keys, rows), = table_cells(text)
    assert keys == ("id", "name", "email", "city") and [text[a:b] for a, b in rows[1]][1:] == [
        "Mateus Carvalho", "mateus.c@uol.com.br", "Recife"]
    md = "| Name | Role |\n|---|---|\n| Tomasz Wójcik | Driver |\n| Efua Mensah | Dispatcher |"
    a = md.index("Dispatcher")
    assert table_column(md, a, a + 10) == "role" and [md[a:b] for a, b, _ in tabled_names(md)] == [
        "Tomasz Wójcik", "Efua Mensah"]
    # one line with commas, or prose, is no table
    assert table_cells("I met Ana, Bea, Cy and Dee, all from work.") == ()
    assert tabled_names("id,status,amount\n1,paid,20\n2,open,35") == []


def test_a_name_key_in_code_or_a_config():
    """`User(first_name="Amani", last_name="Kiprono")` had kept the surname; a YAML owner's full_name too."""
    from guardian_proxy.session.keyed import assigned_names

    text = 'user = User(first_name="Amani", last_name="Kiprono", email="amani.k@gmail.com")'
    assert [text[a:b] for a, b, _ in assigned_names(text)] == ["Amani", "Kiprono"]
    text = "owner:\n  full_name: Wairimu Njoroge\n  team: Platform\n"
    assert [text[a:b] for a, b, _ in assigned_names(text)] == ["Wairimu Njoroge"]
    text = "const job = { name: 'Export Job', lastName: 'Kiprono', status: 'Open' };"
    assert [text[a:b] for a, b, _ in assigned_names(text)] == ["Kiprono"]


def test_a_tables_cells_end_the_hits_in_them():
    from guardian_proxy.session.keyed import cut_at_cells
    from guardian_proxy.session.rewrite import Hit

    text = "id,name,city\n1042,Ingrid Halvorsen,Bergen\n1043,Mateus Carvalho,Recife\n"
    def at(value, entity):
        a = text.index(value)
        return Hit(0, a, a + len(value), entity, value)
    found = cut_at_cells(text, [at("1043,Mateus", "QUANTITY"), at("Recife", "LOCATION"), at("city\n1042", "DATE")])
    assert [(h.text, h.entity) for h in found] == [("1043", "QUANTITY"), ("Recife", "LOCATION")]
    prose = [at("Bergen", "LOCATION")]
    assert cut_at_cells("no table here, just prose", prose) is prose


def test_a_json_record_pasted_into_prose_and_a_record_on_one_line_name_their_people():
    """'Format this record: {"first_name": "Lucía", …}' (not a JSON text, so the JSON keys' rule did not read it) and
    "first_name: Lucía, last_name: Márquez" (unquoted) had left both names as typed."""
    from guardian_proxy.session.keyed import assigned_names

    text = 'Format this record: {"first_name": "Lucía", "last_name": "Márquez", "phone": "+34 612 48 93 07"}'
    assert [text[a:b] for a, b, _ in assigned_names(text)] == ["Lucía", "Márquez"]
    text = "Format this record: first_name: Lucía, last_name: Márquez; city: Sevilla"
    assert [text[a:b] for a, b, _ in assigned_names(text)] == ["Lucía", "Márquez"]
    assert assigned_names("Status: Done, Owner: Export Job") == []  # no key that means a name, no name words


def test_a_records_typed_keys_give_a_username_a_birth_date_and_a_postcode():
    from guardian_proxy.session.keyed import typed_values

    text = 'resp: {"username": "hbrennan_77", "dob": "1991-07-23", "city": "Lancaster"}'
    assert [(text[a:b], e) for a, b, e, _ in typed_values(text)] == [("hbrennan_77", "USERNAME"),
                                                                    ("1991-07-23", "DATE_OF_BIRTH")]
    text = "order_id,customer_name,postcode,total\n10482,Imogen Thackeray,SN1 5LW,42.50\n10483,Raj Kulkarni,LE4 7ZB,118\n"
    assert [text[a:b] for a, b, e, _ in typed_values(text) if e == "LOCATION"] == ["SN1 5LW", "LE4 7ZB"]
    # psql's output: a rule under the header, then the rows
    text = (" patient_id |   name           |    dob     | age_calc\n------------+------------------+------------+----"
            "------\n      30117 | Beatrix Holloway | 1972-02-29 |       53\n      30118 | Ezra Mwangi      | 2001-12-31 "
            "|       24\n")
    assert [(text[a:b], e) for a, b, e, _ in typed_values(text)] == [("1972-02-29", "DATE_OF_BIRTH"),
                                                                    ("2001-12-31", "DATE_OF_BIRTH")]
    text = "| Name | DOB |\n|------|:---:|\n| Efua Mensah | 1990-04-01 |\n"  # Markdown: the rule is no row
    assert [text[a:b] for a, b, _, _ in typed_values(text)] == ["1990-04-01"]


def test_phone_nhs_and_street_keys_and_a_ruby_hash():
    from guardian_proxy.session.keyed import assigned_names, typed_values

    text = ("patient_id,full_name,dob,nhs_number,phone,postcode\n40417,Rukhsana Begum,1974-02-09,614 382 7095,"
            "07723 318642,B12 9QL\n40418,Dafydd ap Rhys,1952-11-30,943 476 5919,01248 361 209,LL57 2DG\n")
    typed = {(text[a:b], e) for a, b, e, _ in typed_values(text)}
    assert {("614 382 7095", "UK_NHS"), ("07723 318642", "PHONE_NUMBER"), ("01248 361 209", "PHONE_NUMBER")} <= typed
    text = '{"customer"=>{"first_name"=>"Ximena", "address_attributes"=>{"street"=>"Av. Insurgentes Sur 1602, Int. 7"}}}'
    assert [text[a:b] for a, b, _ in assigned_names(text)] == ["Ximena"]
    assert [(text[a:b], e) for a, b, e, _ in typed_values(text)] == [("Av. Insurgentes Sur 1602, Int. 7",
                                                                     "STREET_ADDRESS")]


def test_a_name_with_a_particle_and_a_contact_records_name():
    from guardian_proxy.session.keyed import assigned_names, named_value

    assert named_value("full_name", "Dafydd ap Rhys") and named_value("name", "Ana de la Cruz")
    assert not named_value("name", "Export de Job")
    text = '{"name": "Abdulrahman Al-Sayegh", "email": "a.alsayegh@emirates-mail.ae"} {"name": "Export Job"}'
    assert [text[a:b] for a, b, _ in assigned_names(text)] == ["Abdulrahman Al-Sayegh"]
